"""The aiohttp application: middlewares, routes, and the runtime's parts as a cleanup context."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

from aiohttp import web

import ai_memory
from ai_memory.core.openapi import EncodedDocument
from ai_memory.core.ratelimit import RateLimiter
from ai_memory.overview.dashboard import DiskUsage
from ai_memory.runtime import Runtime
from ai_memory.server import routes_briefing, routes_coordination, routes_hooks, routes_pages, routes_status
from ai_memory.server import routes_retention
from ai_memory.server import routes_lint
from ai_memory.server import routes_sync
from ai_memory.server import routes_team
from ai_memory.server import routes_history, routes_projects, routes_recall
from ai_memory.server.body import BODIES, BodyReader
from ai_memory.server.errors import error_middleware
from ai_memory.server.keys import API_DOCUMENT, RUNTIME, UI_ACCESS, UI_DISK, UI_SITE, UI_VIEWS
from ai_memory.server.security import make_security_middleware
from ai_memory.server.ui import routes_actions, routes_login, routes_read
from ai_memory.server.ui.access import UiAccess
from ai_memory.server.ui.render import Views
from ai_memory.server.ui.site import UiSite


def create_app(runtime: Runtime) -> web.Application:
    """Build the app; the runtime starts with the app and stops (draining the writer) with it."""
    cfg = runtime.config
    ui_access, ui_site = UiAccess(runtime.users.active), UiSite.parse(cfg.server.public_url)
    security = make_security_middleware(
        runtime.users, cfg.host, cfg.server.allowed_origins,
        cfg.server.allow_remote,
        RateLimiter(cfg.server.rate_limit_per_s, cfg.server.rate_burst),
        ui_access, ui_site,
    )
    app = web.Application(
        middlewares=[error_middleware, security],
        client_max_size=cfg.server.max_body_bytes,
    )
    app[RUNTIME] = runtime
    app[BODIES] = BodyReader(cfg.server.max_body_bytes)
    app[UI_ACCESS] = ui_access
    app[UI_SITE] = ui_site
    app[UI_VIEWS] = Views()
    app[API_DOCUMENT] = EncodedDocument(ai_memory.__version__)
    app[UI_DISK] = DiskUsage(cfg.data_dir)
    app.add_routes(routes_status.routes)
    app.add_routes(routes_hooks.routes)
    app.add_routes(routes_briefing.routes)
    app.add_routes(routes_coordination.routes)
    app.add_routes(routes_pages.routes)
    app.add_routes(routes_retention.routes)
    app.add_routes(routes_lint.routes)
    app.add_routes(routes_sync.routes)
    app.add_routes(routes_team.routes)
    app.add_routes(routes_history.routes)
    app.add_routes(routes_projects.routes)
    app.add_routes(routes_recall.routes)
    for ui_routes in (routes_login.routes, routes_read.routes, routes_actions.routes):
        app.add_routes(ui_routes)
    app.cleanup_ctx.append(app[BODIES].context)
    app.cleanup_ctx.append(_runtime_context)
    return app


async def _runtime_context(app: web.Application) -> AsyncIterator[None]:
    """Every part of the runtime, started in order and stopped in reverse. One exit stack rather
    than an aiohttp context per part: aiohttp's runner cleans up nothing when its start-up fails,
    and the stack undoes exactly the parts that started before the one that failed."""
    async with AsyncExitStack() as stack:
        for part in app[RUNTIME].parts():
            await stack.enter_async_context(part())
        yield
