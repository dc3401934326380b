"""Who may call the API: bearer token (the admin's or a team user's), Host and Origin checks
(DNS-rebinding and CSRF guard), and the per-token rate limit.

The web view (``/ui/``) takes no bearer token: its user comes from the session cookie
(``ui.access``), every POST there must carry the session's CSRF token, and the daemon's own
origin counts as allowed once the Host is known to be this daemon."""

from __future__ import annotations

import math
import time

from aiohttp import web

from ai_memory.coordination.users import Users
from ai_memory.core.errors import AuthError, Overloaded, TokenRefused
from ai_memory.core.ratelimit import RateLimiter
from ai_memory.core.users import ADMIN
from ai_memory.core.wire import ROUTES
from ai_memory.server.body import read_form
from ai_memory.server.errors import Handler, error_response
from ai_memory.server.ui.access import UiAccess, csrf_ok
from ai_memory.server.ui.routes_login import CONFIRM_PATH, LOGIN_PATH, STYLE_PATH
from ai_memory.server.ui.site import UiSite

OPEN_PATHS = frozenset(route.path for route in ROUTES if route.public)  # /health, the OpenAPI document
UI_PREFIX = "/ui"
UI_OPEN_PATHS = frozenset({LOGIN_PATH, CONFIRM_PATH, STYLE_PATH})
SAFE_METHODS = frozenset({"GET", "HEAD"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def _bearer(request: web.Request) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme == "Bearer" else ""


def is_ui_path(path: str) -> bool:
    return path == UI_PREFIX or path.startswith(UI_PREFIX + "/")


def make_security_middleware(users: Users, bound_host: str, allowed_origins: list[str],
                             allow_remote: bool, limiter: RateLimiter, ui: UiAccess, site: UiSite):
    """A middleware enforcing Host/Origin on every request, and a known token (or, under /ui/, a
    session cookie and a CSRF token) and the rate limit on all but the open paths (/health, the OpenAPI document); it sets
    ``request["user"]`` (``local`` for the admin token). Behind a TLS proxy, ``site`` (the
    configured public URL) names a host and an origin that are this daemon's too."""
    direct_hosts = set(LOOPBACK_NAMES) | {bound_host}  # the daemon's own origin is scheme://Host on these
    origins = {o.rstrip("/") for o in allowed_origins}

    @web.middleware
    async def security(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = _host_name(request.headers.get("Host", ""))
        direct = host in direct_hosts
        own_host = direct or host == site.host
        origin = request.headers.get("Origin")
        own_origin = origin is not None and site.is_own(origin.rstrip("/"), request, direct)
        # the 0600 page `ai-memory ui` hands the browser posts its code from a file: Origin "null";
        # what it reaches only shows whose account the code opens
        local_page = origin == "null" and request.method == "POST" and request.path == LOGIN_PATH
        if origin is not None and origin.rstrip("/") not in origins and not own_origin and not local_page:
            return error_response(AuthError.status, "origin not allowed", f"Origin {origin[:200]!r} is not in server.allowed_origins")
        if not allow_remote and not own_host:
            return error_response(AuthError.status, "host not allowed", f"Host {host[:200]!r} is not this daemon")
        if request.path == CONFIRM_PATH and not own_origin:  # a login only from the daemon's own page: no login CSRF
            return error_response(AuthError.status, "origin not allowed", "confirm the login on the daemon's own page")
        if request.path in OPEN_PATHS or request.path in UI_OPEN_PATHS:
            return await handler(request)
        if is_ui_path(request.path):
            refused = await _ui_identity(request, ui, site)
            if refused is not None:
                return refused
        else:
            user = users.identify(_bearer(request))
            if user is None:  # also a revoked token: the registry dropped it at once
                return error_response(TokenRefused.status, "missing or wrong token",
                                      "send Authorization: Bearer <token> (the data dir's token, or your user token)")
            request["user"] = user
        user = request["user"]
        # the admin token is the operator's own (local hooks, imports, benchmarks): the writer
        # queue's 429 already bounds it; the limit keeps one teammate's runaway agent from
        # starving the others
        wait = 0.0 if user == ADMIN else limiter.take(user, time.monotonic())
        if wait > 0:
            return error_response(Overloaded.status, "rate limit exceeded", f"over server.rate_limit_per_s for {user}",
                                  headers={"Retry-After": str(max(1, math.ceil(wait)))})
        await users.seen(user)
        return await handler(request)

    return security


async def _ui_identity(request: web.Request, ui: UiAccess, site: UiSite) -> web.StreamResponse | None:
    """Set the user of a web-view request from its cookie; a refusal to send back otherwise."""
    session = ui.session(request.cookies.get(site.cookie_name))
    if session is None:
        if request.method in SAFE_METHODS:
            return web.Response(status=303, headers={"Location": site.link(LOGIN_PATH)})
        return error_response(TokenRefused.status, "not logged in", "run `ai-memory ui` for a login link")
    if request.method not in SAFE_METHODS:
        sent = request.headers.get("X-CSRF-Token")
        if sent is None and request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            sent = (await read_form(request)).get("csrf")
        if not csrf_ok(session, sent if isinstance(sent, str) else None):
            return error_response(AuthError.status, "missing or wrong CSRF token", "reload the page and try again")
    request["user"] = session.user
    request["ui_session"] = session
    return None
