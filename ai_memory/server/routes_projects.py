"""Projects: GET /v1/projects (every project with its pages, sessions and last activity); the
lifecycle, admin only: POST /v1/projects/rename, /merge, /purge and /v1/sessions/{id}/move."""

from __future__ import annotations

from typing import Any, TypeVar

from aiohttp import web

from ai_memory.core import wire
from ai_memory.server.audit import audit
from ai_memory.server.body import SMALL, read_json
from ai_memory.server.identity import caller, require_admin
from ai_memory.server.keys import RUNTIME
from ai_memory.overview.activity import projects

routes = web.RouteTableDef()
Body = TypeVar("Body")


@routes.get("/v1/projects")
async def list_projects(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    found = await projects(runtime.reader)
    return web.json_response({"projects": found, "aliases": runtime.projects.map.aliases})


async def _body(request: web.Request, kind: type[Body]) -> Body:
    """The admin's JSON object: the verbs move every user's pages."""
    require_admin(request)
    return wire.parse(kind, await read_json(request, SMALL))


async def _answer(request: web.Request, report: dict[str, Any], action: str, target: str) -> web.Response:
    if not report["dry_run"]:
        await audit(request, caller(request), action, target, str(report.get("git_commit") or ""))
    return web.json_response(report)


@routes.post(r"/v1/projects/{verb:rename|merge}")
async def move_project(request: web.Request) -> web.Response:
    """{from, to, dry_run?}. rename: the project's folder moves in one commit and the old name
    resolves to the new; merge: the pages of ``from`` move into ``to`` (a clash is renamed, never
    overwritten) and ``from`` resolves to ``to``."""
    body = await _body(request, wire.ProjectMoveBody)
    runtime, verb, dry_run = request.app[RUNTIME], request.match_info["verb"], body.get("dry_run", False)
    act = runtime.projects.rename if verb == "rename" else runtime.projects.merge
    report = await runtime.project_change(lambda: act(body["from"], body["to"], dry_run=dry_run))
    return await _answer(request, report, f"project.{verb}", f"{report['from']} → {report['to']}")


@routes.post("/v1/projects/purge")
async def purge_project(request: web.Request) -> web.Response:
    """{project, confirm: true, dry_run?}: every page of the project becomes a tombstone."""
    body = await _body(request, wire.PurgeBody)
    runtime, confirm, dry_run = request.app[RUNTIME], body.get("confirm", False), body.get("dry_run", False)
    report = await runtime.project_change(
        lambda: runtime.projects.purge(body["project"], confirm=confirm, dry_run=dry_run))
    return await _answer(request, report, "project.purge", report["project"])


@routes.post("/v1/sessions/{session_id}/move")
async def move_session(request: web.Request) -> web.Response:
    """{project, dry_run?}: a session recorded under the wrong project moves, with its page and handoff."""
    body = await _body(request, wire.SessionMoveBody)
    runtime, session_id, dry_run = request.app[RUNTIME], request.match_info["session_id"], body.get("dry_run", False)
    report = await runtime.project_change(
        lambda: runtime.projects.move_session(session_id, body["project"], dry_run=dry_run))
    return await _answer(request, report, "session.move", f"{session_id} → {report['to']}")
