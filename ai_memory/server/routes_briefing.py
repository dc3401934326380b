"""GET/POST /v1/briefing: the SessionStart context for an agent starting in a directory (POST claims)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ai_memory.coordination.briefing import hook_output
from ai_memory.coordination.session_start import brief
from ai_memory.core.errors import InputError
from ai_memory.server.audit import audit
from ai_memory.server.body import EVENT, read_json
from ai_memory.server.hook_request import agent_of, cwd_from, hook_payload, project_from, session_of
from ai_memory.server.identity import caller, paths_are_here
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()


async def _briefing(request: web.Request, payload: dict[str, Any], *, claim_work: bool) -> web.Response:
    speaking = agent_of(request, payload)
    payload = hook_payload(request, payload)
    cwd = cwd_from(request, payload)
    if not cwd:
        raise InputError("missing cwd", detail="pass ?cwd= (or a hook payload with cwd)")
    runtime = request.app[RUNTIME]
    project, session_id, owner = project_from(request, payload, cwd), session_of(request, payload), caller(request)
    agent = request.query.get("agent") or _text(payload.get("agent"))
    found = await brief(runtime.writer, runtime.reader, project=project, cwd=cwd, owner=owner,
                        session_id=session_id, agent=agent, claim_work=claim_work,
                        paths_here=paths_are_here(request))
    for handoff in found.handoffs:
        await audit(request, owner, "handoff.accept", handoff["id"], f"session {session_id} (briefing)")
    if request.query.get("format") == "hook":
        return web.json_response(hook_output(speaking, "SessionStart", found.text))
    return web.json_response({"project": found.project, "text": found.text, "sessions": found.sessions,
                              "handoff": found.handoff, "handoffs": found.handoffs,
                              "messages": found.messages})


def _text(value: object) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


@routes.get("/v1/briefing")
async def get_briefing(request: web.Request) -> web.Response:
    """Reads only, whatever it is given: clients retry a GET as safe, and a lost reply must not
    have claimed a handoff or messages nobody saw."""
    return await _briefing(request, {}, claim_work=False)


@routes.post("/v1/briefing")
async def post_briefing(request: web.Request) -> web.Response:
    """The hook clients post the SessionStart payload itself; cwd and session_id come from it."""
    payload = await read_json(request, EVENT)
    if not isinstance(payload, dict):
        raise InputError("payload must be a JSON object")
    return await _briefing(request, payload, claim_work=True)
