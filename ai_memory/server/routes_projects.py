"""GET /v1/projects: every project with its pages, sessions and last activity (read-only)."""

from __future__ import annotations

from aiohttp import web

from ai_memory.server.keys import RUNTIME
from ai_memory.overview.activity import projects

routes = web.RouteTableDef()


@routes.get("/v1/projects")
async def list_projects(request: web.Request) -> web.Response:
    found = await projects(request.app[RUNTIME].reader)
    return web.json_response({"projects": found})
