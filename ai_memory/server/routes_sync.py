"""The wiki across machines: POST /v1/sync (git pull and push), GET /v1/export (every page and
tombstone, a batch at a time, for clients that mirror without git)."""

from __future__ import annotations

from aiohttp import web

from ai_memory.core import wire
from ai_memory.core.errors import InputError
from ai_memory.server.body import SMALL, query_limit, read_json
from ai_memory.server.identity import caller, require_admin
from ai_memory.server.keys import RUNTIME
from ai_memory.wiki.export import decode_cursor
from ai_memory.wiki.export import export as export_pages

routes = web.RouteTableDef()


@routes.post("/v1/sync")
async def sync(request: web.Request) -> web.Response:
    """{remote?}: sync the wiki with sync.remote (or ``remote``) now; the report of what moved."""
    body = wire.parse(wire.SyncBody, await read_json(request, SMALL) if request.can_read_body else {})
    remote = body.get("remote")
    if remote is not None and not remote.strip():
        raise InputError("remote must be a non-empty string", detail="a git URL or path")
    if remote is not None:
        # pushing the whole wiki (private pages too) somewhere new is the data dir owner's call
        require_admin(request)
    report = await request.app[RUNTIME].sync(remote)
    return web.json_response(report.as_json())


@routes.get("/v1/export")
async def export(request: web.Request) -> web.Response:
    """?cursor=&limit=: pages (with their file text), then tombstones (with deleted_at)."""
    limit = query_limit(request)
    text = request.query.get("cursor") or ""
    cursor = decode_cursor(text) if text else None
    runtime = request.app[RUNTIME]
    batch = await export_pages(runtime.reader, runtime.config.sub("wiki"), cursor, limit, caller(request))
    return web.json_response(batch)
