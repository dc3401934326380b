"""GET/POST /v1/briefing: the SessionStart context for an agent starting in a directory."""

from __future__ import annotations

from aiohttp import web

from ai_memory.coordination.briefing import hook_output, recent_sessions, render
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
    sessions = await runtime.reader.run(lambda c: recent_sessions(c, project, session_id))
    text = render(project, sessions)
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
