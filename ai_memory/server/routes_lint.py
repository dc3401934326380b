"""GET /v1/lint: the wiki's defects, each with its page and a fix (read-only)."""

from __future__ import annotations

import asyncio

from aiohttp import web

from ai_memory.server.identity import LOCAL_OWNER, caller
from ai_memory.server.keys import RUNTIME
from ai_memory.store.users import hidden_page_paths
from ai_memory.wiki.lint import LintReport, lint

routes = web.RouteTableDef()


@routes.get("/v1/lint")
async def get_lint(request: web.Request) -> web.Response:
    config = request.app[RUNTIME].config
    # Its own read-only connection on a worker thread: it also lists and hashes every file,
    # which must not hold a reader thread that searches need.
    report = await asyncio.to_thread(lint, config.sub("wiki"), config.sub("raw"), config.db_path)
    owner = caller(request)
    if owner != LOCAL_OWNER:
        hidden = await request.app[RUNTIME].reader.run(lambda c: hidden_page_paths(c, owner))
        report = _without(report, hidden)
    return web.json_response(report.as_dict())


def _without(report: LintReport, hidden: set[str]) -> LintReport:
    """Drop findings that name another user's private page (as their subject or in their text)."""
    if not hidden:
        return report
    kept = [f for f in report.findings
            if f.path not in hidden and not any(p in f.detail or p in f.fix for p in hidden)]
    return LintReport(pages=report.pages - len(hidden), findings=kept)
