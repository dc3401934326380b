"""The web view's pages: search, a page and its history, sessions, handoffs and messages, status.

Each handler parses the query string, calls the function its JSON route calls (so the rules of
who sees what live once), and renders a template; nothing here writes.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from aiohttp import web

from ai_memory.backup import latest_backup
from ai_memory.coordination import handoffs, messages
from ai_memory.core.errors import InputError
from ai_memory.core.retention import FEEDBACK_DELTAS
from ai_memory.core.session_story import story_of
from ai_memory.overview import activity
from ai_memory.overview.dashboard import dashboard
from ai_memory.retrieval.linked_page import read_linked_page
from ai_memory.retrieval.search import KIND_TYPES
from ai_memory.server.identity import token_user
from ai_memory.server.keys import RUNTIME, UI_DISK, UI_SITE, UI_VIEWS
from ai_memory.server.routes_pages import parse_query
from ai_memory.server.routes_status import status_report
from ai_memory.server.ui.pages import SECURITY_HEADERS, asset, html_errors, page
from ai_memory.server.ui.render import diff_lines
from ai_memory.wiki.page_access import read_history

routes = web.RouteTableDef()
SEARCH_FIELDS = ("q", "project", "scope", "as_of")
SESSION_EVENTS_SHOWN = 500


def _query_body(request: web.Request) -> dict[str, Any]:
    """The search form as the JSON route's body: empty fields are absent, explain always on."""
    body: dict[str, Any] = {k: request.query[k].strip() for k in SEARCH_FIELDS if request.query.get(k, "").strip()}
    body["kind"] = request.query.getall("kind", [])
    body["explain"] = True
    if "project" not in body:
        body["all"] = True
    return body


@routes.get("/ui")
async def ui_root(request: web.Request) -> web.Response:
    return web.Response(status=303, headers={"Location": request.app[UI_SITE].link("/ui/")})


@routes.get("/ui/")
@html_errors
async def search(request: web.Request) -> web.Response:
    """The search form; with ``q``, the hits with their snippets and every number that ranked them."""
    runtime, owner = request.app[RUNTIME], token_user(request)
    form: dict[str, str | list[str]] = {k: request.query.get(k, "") for k in SEARCH_FIELDS}
    form["kind"] = request.query.getall("kind", [])
    found, recent, error = None, None, None
    if request.query.get("q", "").strip():
        try:
            query = dataclasses.replace(parse_query(_query_body(request)), owner=owner)
        except InputError as exc:
            error = exc
        else:
            found = await runtime.search(query)
            runtime.note_access([h["path"] for h in found.hits])
    else:
        recent = await activity.recent(runtime.reader, project=None, limit=15, owner=owner)
    return page(request, "search.html", form=form, kinds=sorted(KIND_TYPES), found=found, recent=recent, error=error,
                status=400 if error else 200)


@routes.get("/ui/page")
@html_errors
async def read_page(request: web.Request) -> web.Response:
    """A page: its body rendered, frontmatter, links and backlinks, lineage, actions."""
    ref, owner = request.query.get("path", ""), token_user(request)
    if not ref:
        raise InputError("missing path", detail="/ui/page?path=<project>/<family>/<page>.md")
    found, chain, links = await read_linked_page(request.app[RUNTIME].reader, ref, owner)
    return page(request, "page.html", page=found, lineage=chain if len(chain) > 1 else [], links=links, signals=list(FEEDBACK_DELTAS))


@routes.get("/ui/history")
@html_errors
async def history(request: web.Request) -> web.Response:
    """A page's versions from git's history, newest first, each with its diff from the one before."""
    ref, owner = request.query.get("path", ""), token_user(request)
    found, versions = await read_history(request.app[RUNTIME].reader, ref, owner, 50)
    shown = []
    for i, version in enumerate(versions):
        older = versions[i + 1]["body"] if i + 1 < len(versions) else ""
        shown.append({**version, "diff": diff_lines(older or "", version["body"] or "")})
    return page(request, "history.html", page=found, versions=shown)


@routes.get("/ui/sessions")
@html_errors
async def sessions(request: web.Request) -> web.Response:
    """A timeline per project: agent, time, title, files touched."""
    project, owner = request.app[RUNTIME].projects.canonical(request.query.get("project") or None), token_user(request)
    rows = await activity.session_timeline(request.app[RUNTIME].reader, project=project, owner=owner, limit=200)
    by_project: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_project.setdefault(row["project"] or "(no project)", []).append(row)
    return page(request, "sessions.html", by_project=by_project, project=project or "")


@routes.get("/ui/session")
@html_errors
async def session(request: web.Request) -> web.Response:
    """A session's observations as GET /v1/sessions/{id}/observations reads them, told as a story
    (``core.session_story``: turns of prompt, work and reply), and what memory handed it (its
    briefing's pages, prompt recall's items)."""
    session_id = request.query.get("id", "")
    reader = request.app[RUNTIME].reader
    rows = await activity.session_events(reader, session_id, limit=SESSION_EVENTS_SHOWN)
    given = await activity.handed_over(reader, session_id, token_user(request))
    return page(request, "session.html", session_id=session_id, story=story_of(rows), given=given,
                cut=len(rows) >= SESSION_EVENTS_SHOWN)


@routes.get("/ui/handoffs")
@html_errors
async def coordination(request: web.Request) -> web.Response:
    """Handoffs the user may see (their own or shared) and messages, with their states."""
    reader, owner = request.app[RUNTIME].reader, token_user(request)
    listed = await handoffs.listing(reader, owner=owner, project=None, state=None)
    sent = await messages.listing(reader, project=None, state=None)
    return page(request, "handoffs.html", handoffs=listed, messages=sent, message_states=messages.STATES)


@routes.get("/ui/status")
@html_errors
async def status(request: web.Request) -> web.Response:
    """What ``status`` says, and the newest backup as ``doctor`` reads it; ``?part=1`` is the
    fragment the page's script swaps in every few seconds."""
    runtime = request.app[RUNTIME]
    report = await status_report(runtime)
    newest = await asyncio.to_thread(latest_backup, runtime.config.data_dir)
    backup = {"name": newest[0].name, "age_s": newest[1]} if newest else None
    board = await dashboard(request.app[UI_DISK], runtime.config.sub("wiki"), runtime.syncer, report["agents"],
                            token_user(request))
    template = "status_part.html" if request.query.get("part") else "status.html"
    return page(request, template, report=report, backup=backup, board=board)


@routes.get("/ui/static/{name}")
async def static(request: web.Request) -> web.Response:
    """The view's own assets (behind the login like every /ui/ path); no CDN, no build step."""
    name = request.match_info["name"]
    views = request.app[UI_VIEWS]
    if name == "pygments.css":
        return web.Response(text=views.pygments_css, content_type="text/css", headers=SECURITY_HEADERS)
    return asset(name)
