"""Who may call the API: bearer token, Host and Origin checks (DNS-rebinding and CSRF guard)."""

from __future__ import annotations

import hmac

from aiohttp import web

from ai_memory.server.errors import Handler, error_response

OPEN_PATHS = frozenset({"/health"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def make_security_middleware(token: str, bound_host: str, allowed_origins: list[str],
                             allow_remote: bool):
    """A middleware enforcing Host/Origin on every request and the token on all but /health."""
    allowed_hosts = set(LOOPBACK_NAMES) | {bound_host}
    origins = {o.rstrip("/") for o in allowed_origins}
    expected = f"Bearer {token}".encode()

    @web.middleware
    async def security(request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin is not None and origin.rstrip("/") not in origins:
            return error_response(403, "origin not allowed", f"Origin {origin[:200]!r} is not in server.allowed_origins")
        host = _host_name(request.headers.get("Host", ""))
        if not allow_remote and host not in allowed_hosts:
            return error_response(403, "host not allowed", f"Host {host[:200]!r} is not this daemon")
        if request.path not in OPEN_PATHS:
            given = request.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                return error_response(401, "missing or wrong token",
                                      "send Authorization: Bearer <token> (the token file is in the data dir)")
        return await handler(request)

    return security
