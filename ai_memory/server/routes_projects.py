"""Projects: GET /v1/projects (every project with its pages, sessions and last activity); the
lifecycle, admin only: POST /v1/projects/rename, /merge, /purge and /v1/sessions/{id}/move."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ai_memory.core.errors import InputError
from ai_memory.server.audit import audit
from ai_memory.server.body import SMALL, read_json
from ai_memory.server.identity import caller, require_admin
from ai_memory.server.keys import RUNTIME
from ai_memory.overview.activity import projects

routes = web.RouteTableDef()


@routes.get("/v1/projects")
async def list_projects(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    found = await projects(runtime.reader)
    return web.json_response({"projects": found, "aliases": runtime.projects.map.aliases})


async def _body(request: web.Request, example: str) -> tuple[dict[str, Any], bool]:
    """The admin's JSON object and its ``dry_run`` flag: the verbs move every user's pages."""
    require_admin(request)
    body = await read_json(request, SMALL)
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object", detail=example)
    dry_run = body.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise InputError("dry_run must be true or false")
    return body, dry_run


async def _answer(request: web.Request, report: dict[str, Any], action: str, target: str) -> web.Response:
    if not report["dry_run"]:
        await audit(request, caller(request), action, target, str(report.get("git_commit") or ""))
    return web.json_response(report)


@routes.post(r"/v1/projects/{verb:rename|merge}")
async def move_project(request: web.Request) -> web.Response:
    """{from, to, dry_run?}. rename: the project's folder moves in one commit and the old name
    resolves to the new; merge: the pages of ``from`` move into ``to`` (a clash is renamed, never
    overwritten) and ``from`` resolves to ``to``."""
    body, dry_run = await _body(request, '{"from": "acme", "to": "acme-api"}')
    runtime, verb = request.app[RUNTIME], request.match_info["verb"]
    act = runtime.projects.rename if verb == "rename" else runtime.projects.merge
    report = await runtime.project_change(lambda: act(body.get("from"), body.get("to"), dry_run=dry_run))
    return await _answer(request, report, f"project.{verb}", f"{report['from']} → {report['to']}")


@routes.post("/v1/projects/purge")
async def purge_project(request: web.Request) -> web.Response:
    """{project, confirm: true, dry_run?}: every page of the project becomes a tombstone."""
    body, dry_run = await _body(request, '{"project": "scratch", "confirm": true}')
    runtime = request.app[RUNTIME]
    confirm = body.get("confirm") is True
    report = await runtime.project_change(
        lambda: runtime.projects.purge(body.get("project"), confirm=confirm, dry_run=dry_run))
    return await _answer(request, report, "project.purge", report["project"])


@routes.post("/v1/sessions/{session_id}/move")
async def move_session(request: web.Request) -> web.Response:
    """{project, dry_run?}: a session recorded under the wrong project moves, with its page and handoff."""
    body, dry_run = await _body(request, '{"project": "acme-api"}')
    runtime, session_id = request.app[RUNTIME], request.match_info["session_id"]
    report = await runtime.project_change(
        lambda: runtime.projects.move_session(session_id, body.get("project"), dry_run=dry_run))
    return await _answer(request, report, "session.move", f"{session_id} → {report['to']}")
