"""GET /v1/lint: the wiki's defects, each with its page and a fix (read-only)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from ai_memory.server.keys import RUNTIME
from ai_memory.wiki.lint import lint

routes = web.RouteTableDef()


@routes.get("/v1/lint")
async def get_lint(request: web.Request) -> web.Response:
    config = request.app[RUNTIME].config
    # Its own read-only connection on a worker thread: it also lists and hashes every file,
    # which must not hold a reader thread that searches need.
    report = await asyncio.to_thread(lint, config.sub("wiki"), config.sub("raw"), config.db_path)
    return web.json_response(report.as_dict())
