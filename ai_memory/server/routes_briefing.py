"""GET/POST /v1/briefing: the SessionStart context for an agent starting in a directory (POST claims)."""

from __future__ import annotations


from aiohttp import web

from ai_memory.coordination.briefing import hook_output
from ai_memory.coordination.session_start import brief
from ai_memory.core.errors import InputError
from ai_memory.core.memory import check_project
from ai_memory.ingest.hooks import project_for
from ai_memory.server.audit import audit
from ai_memory.server.body import EVENT, read_json
from ai_memory.server.identity import caller, paths_are_here
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()


async def _briefing(request: web.Request, cwd: str | None, session_id: str | None, agent: str | None,
                    owner: str, *, claim_work: bool) -> web.Response:
    if not cwd:
        raise InputError("missing cwd", detail="pass ?cwd= (or a hook payload with cwd)")
    runtime = request.app[RUNTIME]
    here = paths_are_here(request)
    named = request.query.get("project")  # what a client on another machine resolved itself
    project = check_project(named) if named else project_for(cwd, here)
    project = runtime.projects.canonical(project)  # a renamed project's old name gives the new
    found = await brief(runtime.writer, runtime.reader, project=project, cwd=cwd, owner=owner,
                        session_id=session_id, agent=agent, claim_work=claim_work, paths_here=here)
    for handoff in found.handoffs:
        await audit(request, owner, "handoff.accept", handoff["id"], f"session {session_id} (briefing)")
    if request.query.get("format") == "hook":
        return web.json_response(hook_output("SessionStart", found.text))
    return web.json_response({"project": found.project, "text": found.text, "sessions": found.sessions,
                              "handoff": found.handoff, "handoffs": found.handoffs,
                              "messages": found.messages})


def _text(value: object) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


@routes.get("/v1/briefing")
async def get_briefing(request: web.Request) -> web.Response:
    """Reads only, whatever it is given: clients retry a GET as safe, and a lost reply must not
    have claimed a handoff or messages nobody saw."""
    q = request.query
    return await _briefing(request, q.get("cwd"), q.get("session_id"), q.get("agent"), caller(request),
                           claim_work=False)


@routes.post("/v1/briefing")
async def post_briefing(request: web.Request) -> web.Response:
    """The hook clients post the SessionStart payload itself; cwd and session_id come from it."""
    payload = await read_json(request, EVENT)
    if not isinstance(payload, dict):
        raise InputError("payload must be a JSON object")
    q = request.query
    return await _briefing(request, _text(payload.get("cwd")) or q.get("cwd"),
                           _text(payload.get("session_id")) or q.get("session_id"),
                           q.get("agent") or _text(payload.get("agent")), caller(request), claim_work=True)
