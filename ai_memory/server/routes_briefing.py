"""GET/POST /v1/briefing: the SessionStart context for an agent starting in a directory."""

from __future__ import annotations

from aiohttp import web

from ai_memory.coordination.briefing import hook_output, recent_sessions, render
from ai_memory.coordination.handoffs import accept, render_handoff
from ai_memory.core.errors import InputError
from ai_memory.ingest.hooks import project_of
from ai_memory.server.body import read_json
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()


async def _briefing(request: web.Request, cwd: str | None, session_id: str | None) -> web.Response:
    if not cwd:
        raise InputError("missing cwd", detail="pass ?cwd= (or a hook payload with cwd)")
    project = project_of(cwd)
    runtime = request.app[RUNTIME]
    handoff = await accept(runtime.writer, cwd=cwd, session_id=session_id) if session_id else None
    sessions = await runtime.reader.run(lambda c: recent_sessions(c, project, session_id))
    text = render(project, sessions, render_handoff(handoff) if handoff else None)
    if request.query.get("format") == "hook":
        return web.json_response(hook_output("SessionStart", text))
    return web.json_response({"project": project, "text": text, "sessions": len(sessions)})


@routes.get("/v1/briefing")
async def get_briefing(request: web.Request) -> web.Response:
    return await _briefing(request, request.query.get("cwd"), request.query.get("session_id"))


@routes.post("/v1/briefing")
async def post_briefing(request: web.Request) -> web.Response:
    """The hook clients post the SessionStart payload itself; cwd and session_id come from it."""
    payload = await read_json(request)
    if not isinstance(payload, dict):
        raise InputError("payload must be a JSON object")
    cwd = payload.get("cwd") or request.query.get("cwd")
    session = payload.get("session_id") or request.query.get("session_id")
    return await _briefing(request, str(cwd) if cwd else None, str(session) if session else None)


@routes.post("/v1/handoffs/accept")
async def accept_handoff(request: web.Request) -> web.Response:
    """{cwd, agent, session_id} → {"handoff": {...}} for exactly one caller, else {"handoff": null}."""
    body = await read_json(request)
    if not isinstance(body, dict) or not isinstance(body.get("cwd"), str) or not isinstance(body.get("session_id"), str):
        raise InputError("cwd and session_id are required", detail='{"cwd": "/repo/api", "session_id": "..."}')
    handoff = await accept(request.app[RUNTIME].writer, cwd=body["cwd"], session_id=body["session_id"])
    return web.json_response({"handoff": handoff})
