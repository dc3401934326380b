"""Pages, sessions and search: /v1/query, /v1/pages (read, store), /v1/meta,
/v1/sessions/{id}/finalize, /v1/reindex."""

from __future__ import annotations

import dataclasses
from datetime import date

from aiohttp import web

from ai_memory.core.errors import InputError
from ai_memory.core.memory import parse_draft
from ai_memory.core.observation import parse_timestamp
from ai_memory.overview import activity
from ai_memory.retrieval.search import KIND_TYPES, Query
from ai_memory.server.audit import audit
from ai_memory.server.body import SMALL, WRITE, query_limit, read_json
from ai_memory.server.identity import caller, require_admin
from ai_memory.server.keys import RUNTIME
from ai_memory.wiki import page_access as pages

routes = web.RouteTableDef()
# Bounds on what one search may carry: 100,000 projects once cost 13-23 s of CPU.
MAX_QUERY_PROJECTS = 64
MAX_QUERY_CHARS = 8192


def _opt_str(body: dict, key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(f"{key} must be a string")
    return value


def _str_list(body: dict, key: str, limit: int) -> tuple[str, ...]:
    value = body.get(key) or []
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and len(value) > limit:
        raise InputError(f"too many {key}", detail=f"at most {limit}")
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise InputError(f"{key} must be a list of strings")
    return tuple(value)


def parse_query(body: object) -> Query:
    if not isinstance(body, dict):
        raise InputError("query must be a JSON object", detail='{"q": "...", "project": "...", "k": 10}')
    q = body.get("q")
    if not isinstance(q, str) or not q.strip():
        raise InputError("missing q", detail="q is the text to search for")
    if len(q) > MAX_QUERY_CHARS:
        raise InputError("q is too long", detail=f"at most {MAX_QUERY_CHARS} characters")
    k = body.get("k", 10)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 100:
        raise InputError("k must be an integer from 1 to 100")
    min_score = body.get("min_score")
    if min_score is not None and (not isinstance(min_score, (int, float)) or isinstance(min_score, bool)):
        raise InputError("min_score must be a number")
    as_of = _opt_str(body, "as_of")
    if as_of is not None:
        as_of = parse_timestamp(as_of) if "T" in as_of else _check_date(as_of)
    kinds = _str_list(body, "kind", len(KIND_TYPES))
    unknown = [k for k in kinds if k not in KIND_TYPES]
    if unknown:
        raise InputError(f"unknown kind {unknown[0]!r}", detail="one of " + ", ".join(KIND_TYPES))
    scope = _opt_str(body, "scope")
    if scope is not None and scope not in ("project", "_global", "private"):
        raise InputError("scope must be project, _global or private")
    return Query(
        q=q, project=_opt_str(body, "project"), projects=_str_list(body, "projects", MAX_QUERY_PROJECTS),
        all_projects=bool(body.get("all")), k=k, explain=bool(body.get("explain")), as_of=as_of,
        include_superseded=bool(body.get("include_superseded")), kinds=kinds, scope=scope,
        min_score=float(min_score) if min_score is not None else None, profile=bool(body.get("profile")),
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
    body = await read_json(request, SMALL)
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object", detail='{"path": "acme-api/rules/x.md", "pinned": true}')
    ref, pinned = body.get("path") or body.get("id"), body.get("pinned", True)
    if not isinstance(ref, str) or not ref.strip():
        raise InputError("missing path or id", detail="the page's wiki path or memory id")
    if not isinstance(pinned, bool):
        raise InputError("pinned must be true or false")
    who = caller(request, body)
    done = await request.app[RUNTIME].memories.set_pinned(ref, pinned, who)
    await audit(request, who, "pin" if pinned else "unpin", done["path"])
    return web.json_response(done)


@routes.get("/v1/pages")
async def read_page(request: web.Request) -> web.Response:
    """?path= or ?id= → the page's index row, with its lineage of corrections."""
    ref = request.query.get("path") or request.query.get("id")
    if not ref:
        raise InputError("missing path or id", detail="pass ?path=<project>/<family>/<page>.md or ?id=<memory id>")
    page, chain = await pages.read_page(request.app[RUNTIME].reader, ref, caller(request))
    return web.json_response({**page, "lineage": chain if len(chain) > 1 else []})


@routes.post("/v1/pages")
async def store_page(request: web.Request) -> web.Response:
    """Store a structured memory: {text, kind, project, ...} → {id, path}; 409 on a duplicate."""
    body = await read_json(request, WRITE)
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
    ref = request.query.get("path") or request.query.get("id")
    if not ref:
        raise InputError("missing path or id", detail="pass ?path=<project>/<family>/<page>.md or ?id=<memory id>")
    who = caller(request)
    found = await pages.delete_page(request.app[RUNTIME].wiki, ref, who)
    await audit(request, who, "delete", found["path"], found["uid"] or "")
    return web.json_response({"deleted": found["path"], "id": found["uid"]})


@routes.get("/v1/recent")
async def recent(request: web.Request) -> web.Response:
    """?project=&limit=: the newest pages and sessions."""
    limit = query_limit(request, 10, 100)
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
