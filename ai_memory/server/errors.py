"""The HTTP edge of the exception tree: every failure leaves as a JSON ``{error, detail}``."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from ai_memory.core.errors import AiMemoryError, Overloaded

log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error_response(status: int, error: str, detail: str | None = None,
                   headers: dict[str, str] | None = None, fields: dict[str, object] | None = None) -> web.Response:
    body = json.dumps({**(fields or {}), "error": error, "detail": detail})
    return web.Response(status=status, text=body, content_type="application/json", headers=headers)


def from_error(exc: AiMemoryError) -> web.Response:
    headers = None
    if isinstance(exc, Overloaded):
        headers = {"Retry-After": str(max(1, round(exc.retry_after)))}
    return error_response(exc.status, exc.message, exc.detail, headers, exc.fields)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Translate typed errors and aiohttp's own HTTP errors into JSON; log anything else."""
    try:
        return await handler(request)
    except AiMemoryError as exc:
        return from_error(exc)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return error_response(exc.status, exc.reason, exc.text if exc.text != f"{exc.status}: {exc.reason}" else None,
                              headers={k: v for k, v in exc.headers.items() if k == "Allow"})
    except Exception:  # an unexpected bug: log it with its traceback, answer 500 in JSON
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(500, "internal error", "see the daemon log")
