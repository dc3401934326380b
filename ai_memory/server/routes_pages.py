"""Pages, sessions and search: /v1/query, /v1/pages, /v1/sessions/{id}/finalize, /v1/reindex."""

from __future__ import annotations

from aiohttp import web

from ai_memory.core.errors import InputError, NotFound
from ai_memory.retrieval.search import Query, answer
from ai_memory.server.body import read_json
from ai_memory.server.keys import RUNTIME
from ai_memory.store.observations import session_exists
from ai_memory.store.pages import get_page

routes = web.RouteTableDef()


def parse_query(body: object) -> Query:
    if not isinstance(body, dict):
        raise InputError("query must be a JSON object", detail='{"q": "...", "project": "...", "k": 10}')
    q = body.get("q")
    if not isinstance(q, str) or not q.strip():
        raise InputError("missing q", detail="q is the text to search for")
    k = body.get("k", 10)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 100:
        raise InputError("k must be an integer from 1 to 100")
    projects = body.get("projects") or []
    if not isinstance(projects, list) or not all(isinstance(p, str) for p in projects):
        raise InputError("projects must be a list of names")
    project = body.get("project")
    if project is not None and not isinstance(project, str):
        raise InputError("project must be a string")
    return Query(q=q, project=project, projects=tuple(projects), all_projects=bool(body.get("all")), k=k)


@routes.post("/v1/query")
async def query(request: web.Request) -> web.Response:
    q = parse_query(await read_json(request))
    result = await request.app[RUNTIME].reader.run(lambda c: answer(c, q))
    return web.json_response({"hits": result.hits, "raw_hits": result.raw_hits})


@routes.get("/v1/pages")
async def read_page(request: web.Request) -> web.Response:
    path = request.query.get("path")
    if not path:
        raise InputError("missing path", detail="pass ?path=<project>/<family>/<page>.md")
    page = await request.app[RUNTIME].reader.run(lambda c: get_page(c, path))
    if page is None:
        raise NotFound("no such page", detail=path)
    return web.json_response(page)


@routes.post("/v1/sessions/{session_id}/finalize")
async def finalize(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    session_id = request.match_info["session_id"]
    if not await runtime.reader.run(lambda c: session_exists(c, session_id)):
        raise NotFound("no such session", detail=session_id)
    path = await runtime.sessions.finalize(session_id)
    return web.json_response({"session_id": session_id, "page": path})


@routes.post("/v1/reindex")
async def reindex(request: web.Request) -> web.Response:
    report = await request.app[RUNTIME].reindex()
    return web.json_response(report)
