"""GET /v1/lint: the wiki's defects, each with its page and a fix (read-only)."""

from __future__ import annotations

from aiohttp import web

from ai_memory.server.identity import caller
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()


@routes.get("/v1/lint")
async def get_lint(request: web.Request) -> web.Response:
    report = await request.app[RUNTIME].lint.lint_for(caller(request))
    return web.json_response(report.as_dict())
