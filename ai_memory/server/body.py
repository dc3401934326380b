"""Reading request bodies as JSON with clear 4xx errors for every way they can be wrong."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ai_memory.core.errors import InputError, PayloadTooLarge, UnsupportedMedia


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_json(request: web.Request) -> Any:
    """The parsed body. 415 for a non-JSON content type, 413 when too large, 400 when malformed."""
    ctype = request.content_type
    if request.headers.get("Content-Type") and not (ctype == "application/json" or ctype.endswith("+json")):
        raise UnsupportedMedia("body must be JSON", detail=f"Content-Type {ctype!r} is not application/json")
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge as exc:
        raise PayloadTooLarge("body too large", detail=f"limit is {request.app._client_max_size} bytes") from exc
    if not raw.strip():
        raise InputError("empty body", detail="send a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("body is not UTF-8", detail=str(exc)) from exc
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise InputError("malformed JSON", detail="nesting too deep") from exc
    except ValueError as exc:
        raise InputError("malformed JSON", detail=str(exc)[:300]) from exc


def query_limit(request: web.Request, default: int, maximum: int) -> int:
    """``?limit=``: an integer from 1 to ``maximum`` (InputError otherwise), ``default`` if absent."""
    try:
        limit = int(request.query.get("limit", str(default)))
    except ValueError:
        raise InputError("limit must be an integer") from None
    if not 1 <= limit <= maximum:
        raise InputError(f"limit must be from 1 to {maximum}")
    return limit
