"""Hook ingress: POST /hook (one event) and POST /hook/batch (the spool drain's path)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from ai_memory.core.errors import AiMemoryError, InputError, PayloadTooLarge
from ai_memory.server.body import BATCH, EVENT, read_json
from ai_memory.server.identity import caller, paths_are_here
from ai_memory.server.keys import RUNTIME
from ai_memory.ingest.hooks import ingest_event
from ai_memory.store.observations import InsertResult

MAX_BATCH = 256
routes = web.RouteTableDef()


async def ingest(request: web.Request, payload: Any, agent: str, event: str | None,
                 key: str | None, host: str | None = None, client_os: str | None = None,
                 captured_at: Any = None) -> InsertResult:
    """Sanitize one payload and wait until it is durably committed."""
    runtime = request.app[RUNTIME]
    result = await ingest_event(runtime.writer, payload, agent=agent, event=event, idempotency_key=key,
                                host=host, client_os=client_os, captured_at=captured_at,
                                owner=caller(request),  # every event is attributed to its token's user
                                paths_here=paths_are_here(request), projects_here=runtime.recent_projects.name_of,
                                quota=runtime.quota)
    runtime.notice(result)
    return result


def is_envelope(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("payload"), dict)


async def ingest_envelope(request: web.Request, envelope: dict[str, Any], default_agent: str) -> InsertResult:
    """An envelope {agent, event, idempotency_key, host, os, captured_at, payload}, as hook clients spool it."""
    return await ingest(request, envelope["payload"], str(envelope.get("agent") or default_agent),
                        envelope.get("event") or None, envelope.get("idempotency_key"),
                        envelope.get("host"), envelope.get("os"), envelope.get("captured_at"))


@routes.post("/hook")
async def post_hook(request: web.Request) -> web.Response:
    payload = await read_json(request, EVENT)
    agent = request.query.get("agent", "unknown")
    result = await ingest(request, payload, agent, request.query.get("event"),
                          request.headers.get("Idempotency-Key"), request.query.get("host"))
    status = 200 if result.duplicate else 202
    if request.query.get("quiet") == "1":
        # Claude Code's http hooks parse a JSON reply as hook output; {} means "no opinion".
        return web.json_response({}, status=status)
    return web.json_response({"id": result.id, "duplicate": result.duplicate}, status=status)


def _batch_items(body: Any) -> list[Any]:
    items = body.get("events") if isinstance(body, dict) else body
    if not isinstance(items, list):
        raise InputError("batch must be a JSON list or {\"events\": [...]}")
    if len(items) > MAX_BATCH:
        raise PayloadTooLarge("batch too large", detail=f"at most {MAX_BATCH} events per batch")
    return items


async def _one(request: web.Request, item: Any, default_agent: str) -> dict[str, Any]:
    """An item is a raw payload, or an envelope {agent, event, idempotency_key, payload}."""
    try:
        if is_envelope(item):
            result = await ingest_envelope(request, item, default_agent)
        else:
            result = await ingest(request, item, default_agent, None, None)
    except AiMemoryError as exc:
        out: dict[str, Any] = {"status": exc.status, "error": exc.message, "detail": exc.detail}
        return out
    return {"status": 200 if result.duplicate else 202, "id": result.id, "duplicate": result.duplicate}


@routes.post("/hook/batch")
async def post_batch(request: web.Request) -> web.Response:
    items = _batch_items(await read_json(request, BATCH))
    agent = request.query.get("agent", "unknown")
    results = await asyncio.gather(*(_one(request, item, agent) for item in items))
    for index, result in enumerate(results):
        result["index"] = index
    accepted = sum(1 for r in results if r["status"] in (200, 202))
    return web.json_response({"accepted": accepted, "results": results})


@routes.post("/hook/envelope")
async def post_envelope(request: web.Request) -> web.Response:
    """One spool envelope {agent, event, idempotency_key, host, os, payload}: the hook clients' path."""
    envelope = await read_json(request, EVENT)
    if not is_envelope(envelope):
        raise InputError("not an envelope", detail="expected {agent, event, idempotency_key, payload: {...}}")
    result = await ingest_envelope(request, envelope, "unknown")
    return web.json_response({"stored": True, "id": result.id, "duplicate": result.duplicate},
                             status=200 if result.duplicate else 202)
