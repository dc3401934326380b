"""GET /v1/lint: the wiki's defects, each with its page and a fix (read-only)."""

from __future__ import annotations

from aiohttp import web

from ai_memory.server.identity import caller
from ai_memory.server.keys import RUNTIME
from ai_memory.wiki.lint import lint_for

routes = web.RouteTableDef()


@routes.get("/v1/lint")
async def get_lint(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    config = runtime.config
    report = await lint_for(caller(request), runtime.reader, config.sub("wiki"), config.sub("raw"), config.db_path)
    return web.json_response(report.as_dict())
