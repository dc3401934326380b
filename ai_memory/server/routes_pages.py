"""Pages, sessions and search: /v1/query, /v1/pages (read, store), /v1/meta,
/v1/sessions/{id}/finalize, /v1/reindex."""

from __future__ import annotations

import dataclasses
from datetime import date

from aiohttp import web

from ai_memory.core import wire
from ai_memory.core.errors import InputError
from ai_memory.core.memory import parse_draft
from ai_memory.core.observation import parse_timestamp
from ai_memory.overview import activity
from ai_memory.retrieval.search import Query
from ai_memory.server.audit import audit
from ai_memory.server.body import SMALL, WRITE, query_limit, read_json
from ai_memory.server.identity import caller, require_admin
from ai_memory.server.keys import RUNTIME
from ai_memory.wiki import page_access as pages

routes = web.RouteTableDef()


def parse_query(body: object) -> Query:
    asked = wire.parse(wire.QueryBody, body)
    as_of = asked.get("as_of")
    if as_of is not None:
        as_of = parse_timestamp(as_of) if "T" in as_of else _check_date(as_of)
    if not asked["q"].strip():
        raise InputError("missing q", detail="q is the text to search for")
    kinds, projects = asked.get("kind") or (), asked.get("projects") or ()
    min_score = asked.get("min_score")
    return Query(
        q=asked["q"], project=asked.get("project"), projects=(projects,) if isinstance(projects, str) else tuple(projects),
        all_projects=bool(asked.get("all")), k=asked.get("k", 10), explain=bool(asked.get("explain")), as_of=as_of,
        include_superseded=bool(asked.get("include_superseded")),
        kinds=(kinds,) if isinstance(kinds, str) else tuple(kinds), scope=asked.get("scope"),
        min_score=float(min_score) if min_score is not None else None, profile=bool(asked.get("profile")),
    )


def _check_date(text: str) -> str:
    try:
        date.fromisoformat(text)
    except ValueError as exc:
        raise InputError("as_of must be an ISO date", detail=f"{text[:40]!r}: {exc}") from exc
    return text


@routes.post("/v1/query")
async def query(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    body = await read_json(request, SMALL)
    q = dataclasses.replace(parse_query(body), owner=caller(request, body))
    result = await runtime.search(q)
    runtime.note_access([h["path"] for h in result.hits])
    found = {"hits": result.hits, "raw_hits": result.raw_hits, "streams": result.streams_used}
    if q.profile:
        found["profile_ms"] = result.stages_ms
    return web.json_response(found)


@routes.post("/v1/pages/pin")
async def pin_page(request: web.Request) -> web.Response:
    """{path or id, pinned}: pin a page (the forget sweep keeps it, the briefing lists a pinned
    rule or decision) or unpin it; the page's frontmatter changes, in git like any edit."""
    body = wire.parse(wire.PinBody, await read_json(request, SMALL))
    ref, pinned = wire.page_ref(body), body.get("pinned", True)
    who = caller(request, body)
    done = await request.app[RUNTIME].memories.set_pinned(ref, pinned, who)
    await audit(request, who, "pin" if pinned else "unpin", done["path"])
    return web.json_response(done)


@routes.get("/v1/pages")
async def read_page(request: web.Request) -> web.Response:
    """?path= or ?id= → the page's index row, with its lineage of corrections."""
    ref = wire.page_ref(request.query)
    page, chain = await pages.read_page(request.app[RUNTIME].reader, ref, caller(request))
    return web.json_response({**page, "lineage": chain if len(chain) > 1 else []})


@routes.post("/v1/pages")
async def store_page(request: web.Request) -> web.Response:
    """Store a structured memory: {text, kind, project, ...} → {id, path}; 409 on a duplicate."""
    body = wire.parse(wire.MemoryBody, await read_json(request, WRITE))
    draft = parse_draft(body, owner=caller(request, body))
    stored = await request.app[RUNTIME].memories.remember(draft)
    if stored.created:
        action = "correct" if stored.supersedes else "write"
        detail = f"{draft.kind} in {draft.home}" + (f", supersedes {stored.supersedes}" if stored.supersedes else "")
        await audit(request, draft.owner, action, stored.path, detail)
    return web.json_response(stored.as_json(), status=201 if stored.created else 200)


@routes.delete("/v1/pages")
async def delete_page(request: web.Request) -> web.Response:
    """?path= or ?id=: remove a page (a mistake, a leaked secret); git history still has it."""
    ref = wire.page_ref(request.query)
    who = caller(request)
    found = await pages.delete_page(request.app[RUNTIME].wiki, ref, who)
    await audit(request, who, "delete", found["path"], found["uid"] or "")
    return web.json_response({"deleted": found["path"], "id": found["uid"]})


@routes.get("/v1/recent")
async def recent(request: web.Request) -> web.Response:
    """?project=&limit=: the newest pages and sessions."""
    limit = query_limit(request)
    project, owner = request.app[RUNTIME].projects.canonical(request.query.get("project")), caller(request)
    found = await activity.recent(request.app[RUNTIME].reader, project=project, limit=limit, owner=owner)
    return web.json_response(found)


@routes.get("/v1/meta")
async def meta(request: web.Request) -> web.Response:
    project, owner = request.app[RUNTIME].projects.canonical(request.query.get("project")), caller(request)
    found = await activity.memory_meta(request.app[RUNTIME].reader, project=project, owner=owner)
    return web.json_response(found)


@routes.post("/v1/sessions/{session_id}/finalize")
async def finalize(request: web.Request) -> web.Response:
    session_id = request.match_info["session_id"]
    path = await request.app[RUNTIME].sessions.finalize_known(session_id)
    if path:
        await audit(request, caller(request), "session.finalize", path, session_id)
    return web.json_response({"session_id": session_id, "page": path})


@routes.post("/v1/reindex")
async def reindex(request: web.Request) -> web.Response:
    require_admin(request)  # a rebuild of the whole index is the operator's call, not a teammate's
    report = await request.app[RUNTIME].reindex()
    await audit(request, caller(request), "reindex", "index", f"{report['pages']} pages")
    return web.json_response(report)
