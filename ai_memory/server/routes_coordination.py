"""Handoffs and messages: /v1/handoffs (begin, list, accept, cancel) and /v1/messages."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, overload

from aiohttp import web

from ai_memory.coordination import handoffs, messages
from ai_memory.core import wire
from ai_memory.core.errors import InputError
from ai_memory.core.memory import check_project
from ai_memory.ingest.hooks import project_for
from ai_memory.server.audit import audit
from ai_memory.server.body import SMALL, WRITE, read_json
from ai_memory.server.identity import caller, paths_are_here
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()


def _idempotency_key(request: web.Request, body: Mapping[str, Any]) -> str | None:
    """The client's key for this write (header or body): a retry returns the first record."""
    key = request.headers.get("Idempotency-Key") or body.get("idempotency_key")
    if key is None:
        return None
    if not isinstance(key, str) or not 1 <= len(key) <= 128 or not key.isprintable():
        raise InputError("invalid idempotency key", detail="1-128 printable characters")
    return key


@overload
def _canonical(request: web.Request, project: str) -> str: ...
@overload
def _canonical(request: web.Request, project: str | None) -> str | None: ...
def _canonical(request: web.Request, project: str | None) -> str | None:
    """The project a client naming ``project`` means now (an old name of a renamed one: the new)."""
    return request.app[RUNTIME].projects.canonical(project)


@routes.post("/v1/handoffs")
async def begin_handoff(request: web.Request) -> web.Response:
    """Leave a handoff on purpose; the next matching session (or ``to_agent``) takes it first."""
    body = wire.parse(wire.HandoffBody, await read_json(request, WRITE))
    cwd, named = body.get("cwd") or None, body.get("project") or None
    here = paths_are_here(request)
    project = _canonical(request, check_project(named) if named else (project_for(cwd, here) if cwd else None))
    record = handoffs.parse_manual(body, project=project, owner=caller(request, body), now=datetime.now(timezone.utc),
                                   paths_here=here)
    record["idempotency_key"] = _idempotency_key(request, body)
    handoff, created = await handoffs.begin(request.app[RUNTIME].writer, record)
    if created:
        await audit(request, record["owner"], "handoff.begin", handoff["id"],
                    f"{project or ''}{' shared' if handoff.get('shared') else ''}".strip())
    return web.json_response({"handoff": handoff, "created": created}, status=201 if created else 200)


@routes.get("/v1/handoffs")
async def list_handoffs(request: web.Request) -> web.Response:
    owner = caller(request)
    project, state = _canonical(request, request.query.get("project")), request.query.get("state")
    found = await handoffs.listing(request.app[RUNTIME].reader, owner=owner, project=project, state=state)
    return web.json_response({"handoffs": found})


@routes.post("/v1/handoffs/accept")
async def accept_handoff(request: web.Request) -> web.Response:
    """{cwd, agent, session_id} → {"handoff": {...}} for exactly one caller, else {"handoff": null}."""
    body = wire.parse(wire.AcceptBody, await read_json(request, SMALL))
    cwd, session_id = body["cwd"], body["session_id"]
    if not cwd or not session_id:
        raise InputError("cwd and session_id are required", detail='{"cwd": "/repo/api", "session_id": "..."}')
    who = caller(request, body)
    here = paths_are_here(request)
    project = _canonical(request, body.get("project") or project_for(cwd, here))
    handoff = await handoffs.accept(request.app[RUNTIME].writer, cwd=cwd, session_id=session_id,
                                    agent=body.get("agent") or None, project=project, owner=who, paths_here=here)
    if handoff is not None:
        await audit(request, who, "handoff.accept", handoff["id"], f"session {session_id}")
    return web.json_response({"handoff": handoff})


@routes.post("/v1/handoffs/{handoff_id}/cancel")
async def cancel_handoff(request: web.Request) -> web.Response:
    who = caller(request)
    handoff = await handoffs.cancel(request.app[RUNTIME].writer, request.match_info["handoff_id"], who)
    await audit(request, who, "handoff.cancel", handoff["id"])
    return web.json_response({"handoff": handoff})


@routes.post("/v1/messages")
async def send_message(request: web.Request) -> web.Response:
    body = wire.parse(wire.MessageBody, await read_json(request, WRITE))
    message = messages.parse_message(body, owner=caller(request, body), now=datetime.now(timezone.utc))
    for key in ("to_project", "from_project"):
        message[key] = _canonical(request, message.get(key))
    message["idempotency_key"] = _idempotency_key(request, body)
    sent, created = await messages.send(request.app[RUNTIME].writer, message)
    if created:
        await audit(request, message["owner"], "message.send", sent["id"], f"to {sent.get('to_project')}")
    return web.json_response({"message": sent, "created": created}, status=201 if created else 200)


@routes.get("/v1/messages")
async def get_messages(request: web.Request) -> web.Response:
    project, state = _canonical(request, request.query.get("project")), request.query.get("state")
    found = await messages.listing(request.app[RUNTIME].reader, project=project, state=state)
    return web.json_response({"messages": found})


@routes.post("/v1/messages/pop")
async def pop_messages(request: web.Request) -> web.Response:
    """{project, session_id?, limit?} → the oldest open messages, each delivered to one caller only."""
    body = wire.parse(wire.PopBody, await read_json(request, SMALL))
    project = _canonical(request, check_project(body["project"]))
    popped = await messages.pop(request.app[RUNTIME].writer, project, session_id=body.get("session_id") or None,
                                limit=body.get("limit", 1))
    if popped:
        await audit(request, caller(request, body), "message.pop", ",".join(m["id"] for m in popped), project)
    return web.json_response({"messages": popped})


@routes.post("/v1/messages/{message_id}/cancel")
async def cancel_message(request: web.Request) -> web.Response:
    who = caller(request)
    message = await messages.cancel(request.app[RUNTIME].writer, request.match_info["message_id"], who)
    await audit(request, who, "message.cancel", message["id"])
    return web.json_response({"message": message})
