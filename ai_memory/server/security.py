"""Who may call the API: bearer token (the admin's or a team user's), Host and Origin checks
(DNS-rebinding and CSRF guard), and the per-token rate limit."""

from __future__ import annotations

import math
import time

from aiohttp import web

from ai_memory.coordination.users import Users
from ai_memory.core.errors import AuthError, Overloaded, TokenRefused
from ai_memory.core.ratelimit import RateLimiter
from ai_memory.core.users import ADMIN
from ai_memory.server.errors import Handler, error_response

OPEN_PATHS = frozenset({"/health"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def _bearer(request: web.Request) -> str:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme == "Bearer" else ""


def make_security_middleware(users: Users, bound_host: str, allowed_origins: list[str],
                             allow_remote: bool, limiter: RateLimiter):
    """A middleware enforcing Host/Origin on every request, and a known token and the rate limit
    on all but /health; it sets ``request["user"]`` (``local`` for the admin token)."""
    allowed_hosts = set(LOOPBACK_NAMES) | {bound_host}
    origins = {o.rstrip("/") for o in allowed_origins}

    @web.middleware
    async def security(request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin is not None and origin.rstrip("/") not in origins:
            return error_response(AuthError.status, "origin not allowed", f"Origin {origin[:200]!r} is not in server.allowed_origins")
        host = _host_name(request.headers.get("Host", ""))
        if not allow_remote and host not in allowed_hosts:
            return error_response(AuthError.status, "host not allowed", f"Host {host[:200]!r} is not this daemon")
        if request.path not in OPEN_PATHS:
            user = users.identify(_bearer(request))
            if user is None:  # also a revoked token: the registry dropped it at once
                return error_response(TokenRefused.status, "missing or wrong token",
                                      "send Authorization: Bearer <token> (the data dir's token, or your user token)")
            # the admin token is the operator's own (local hooks, imports, benchmarks): the writer
            # queue's 429 already bounds it; the limit keeps one teammate's runaway agent from
            # starving the others
            wait = 0.0 if user == ADMIN else limiter.take(user, time.monotonic())
            if wait > 0:
                return error_response(Overloaded.status, "rate limit exceeded", f"over server.rate_limit_per_s for {user}",
                                      headers={"Retry-After": str(max(1, math.ceil(wait)))})
            request["user"] = user
            await users.seen(user)
        return await handler(request)

    return security
