"""GET/POST /v1/briefing: the SessionStart context for an agent starting in a directory."""

from __future__ import annotations


from aiohttp import web

from ai_memory.coordination.briefing import (
    CAPS, Section, hook_output, lines_that_fit, memory_sections, recent_sessions, render, session_section,
)
from ai_memory.coordination.handoffs import accept, render_handoff
from ai_memory.coordination.messages import claim, render_messages
from ai_memory.core.clock import now_iso
from ai_memory.store.messages import list_messages
from ai_memory.core.errors import InputError
from ai_memory.ingest.hooks import project_of
from ai_memory.server.audit import audit
from ai_memory.server.body import read_json
from ai_memory.server.identity import caller
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()
BRIEFING_MESSAGES = 10


async def _briefing(request: web.Request, cwd: str | None, session_id: str | None, agent: str | None,
                    owner: str) -> web.Response:
    if not cwd:
        raise InputError("missing cwd", detail="pass ?cwd= (or a hook payload with cwd)")
    project = project_of(cwd)
    runtime = request.app[RUNTIME]
    now = now_iso()
    handoff = None
    if session_id:  # claiming needs a session to claim for; without one the briefing only reads
        handoff = await accept(runtime.writer, cwd=cwd, session_id=session_id, agent=agent, project=project,
                               owner=owner)
        if handoff is not None:
            await audit(request, owner, "handoff.accept", handoff["id"], f"session {session_id} (briefing)")

    def read(conn) -> tuple[list[Section], list[dict], int]:
        sessions = recent_sessions(conn, project, session_id)
        waiting = list_messages(conn, project=project, state="open", now=now, limit=BRIEFING_MESSAGES)
        return [session_section(sessions)] + memory_sections(conn, project, owner, now), waiting, len(sessions)

    later, waiting, session_count = await runtime.reader.run(read)
    handoff_section = Section("", render_handoff(handoff) if handoff else [], CAPS["handoff"])
    popped = await _deliver(runtime.writer, waiting, session_id)
    sections = [handoff_section, Section("Messages for this project:", render_messages(popped), CAPS["messages"]),
                *later]
    text = render(project, sections)
    if request.query.get("format") == "hook":
        return web.json_response(hook_output("SessionStart", text))
    return web.json_response({"project": project, "text": text, "sessions": session_count,
                              "handoff": handoff, "messages": popped})


async def _deliver(writer, waiting: list[dict], session_id: str | None) -> list[dict]:
    """Claim the messages the briefing has room to show: a message is delivered exactly once,
    and one that would be cut for size stays open for the next session."""
    if not session_id or not waiting:
        return []
    room = lines_that_fit(Section("Messages for this project:", render_messages(waiting)), CAPS["messages"])
    return await claim(writer, [m["id"] for m in waiting[:room]], session_id=session_id)


def _text(value: object) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


@routes.get("/v1/briefing")
async def get_briefing(request: web.Request) -> web.Response:
    q = request.query
    return await _briefing(request, q.get("cwd"), q.get("session_id"), q.get("agent"), caller(request))


@routes.post("/v1/briefing")
async def post_briefing(request: web.Request) -> web.Response:
    """The hook clients post the SessionStart payload itself; cwd and session_id come from it."""
    payload = await read_json(request)
    if not isinstance(payload, dict):
        raise InputError("payload must be a JSON object")
    q = request.query
    return await _briefing(request, _text(payload.get("cwd")) or q.get("cwd"),
                           _text(payload.get("session_id")) or q.get("session_id"),
                           q.get("agent") or _text(payload.get("agent")), caller(request))
