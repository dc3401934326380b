"""A page's history from git: /v1/pages/history, /v1/pages/at, /v1/pages/restore."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from ai_memory.core import wire
from ai_memory.core.errors import InputError
from ai_memory.server.audit import audit
from ai_memory.server.body import SMALL, read_json
from ai_memory.server.identity import caller
from ai_memory.server.keys import RUNTIME
from ai_memory.wiki.page_versions import PageVersions, version_json

routes = web.RouteTableDef()


def _versions(request: web.Request) -> PageVersions:
    runtime = request.app[RUNTIME]
    return PageVersions(runtime.wiki, runtime.config.wiki.history_depth)


def _rev(values: Mapping[str, object]) -> str:
    rev = values.get("rev")
    if not isinstance(rev, str) or not rev:
        raise InputError("missing rev", detail="a commit id from ai-memory history PAGE, HEAD or HEAD~N")
    return rev


@routes.get("/v1/pages/history")
async def page_history(request: web.Request) -> web.Response:
    """?path= or ?id= → {path, revisions}: newest first (commit, time, author, message, removed)."""
    path, revisions = await _versions(request).log(wire.page_ref(request.query), caller(request))
    return web.json_response({"path": path, "revisions": [r.as_json() for r in revisions]})


@routes.get("/v1/pages/at")
async def page_at(request: web.Request) -> web.Response:
    """?path= or ?id=, &rev= → the page as that commit left it (the shape of /v1/pages)."""
    found = await _versions(request).at(wire.page_ref(request.query), _rev(request.query), caller(request))
    return web.json_response(version_json(found))


@routes.post("/v1/pages/restore")
async def restore_page(request: web.Request) -> web.Response:
    """{path|id, rev} → the page written back as that version, in a new commit."""
    body = wire.parse(wire.RestoreBody, await read_json(request, SMALL))
    who = caller(request, body)
    restored = await _versions(request).restore(wire.page_ref(body), _rev(body), who)
    if restored.changed:
        await audit(request, who, "restore", restored.path, restored.restored_from.commit[:10])
    return web.json_response(restored.as_json())
