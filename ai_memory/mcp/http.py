"""The MCP tools over Streamable HTTP, the SDK's own transport, for agents that connect to the
daemon directly (``/mcp``) instead of starting ``ai-memory mcp``.

One server serves every caller, stateless (a daemon restart breaks no session) and answering in
JSON. Each request's tools act as its caller: a middleware of the SDK reads the request's bearer
token and project header into a context variable, and the tools' context answers from it, so a
teammate's token reaches the daemon's API as theirs (their private pages, their audit rows) and
nothing passes from one caller to another. The tools stay thin clients of the daemon's HTTP API,
on the daemon's own loopback address, as they are over stdio.
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from ai_memory.client.api import MemoryAPI
from ai_memory.client.http import DaemonClient
from ai_memory.mcp.context import ToolContext
from ai_memory.mcp.server import build_server

PROJECT_HEADER = "x-ai-memory-project"
GLOBAL_PROJECT = "_global"
# The daemon answers its own loopback address at once; a search can take seconds on a big wiki.
API_TIMEOUT_S = 60.0
# Where a remote agent works is on its machine, not here: briefings and handoffs need a cwd named.
NO_WORKDIR = Path("/")

_caller: contextvars.ContextVar[ToolContext] = contextvars.ContextVar("ai_memory_mcp_http_caller")


class CallerContext:
    """A ``ToolContext`` whose every field (api, project, workdir, session_id) is the current
    request's caller's."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_caller.get(), name)


def caller_context(headers: Mapping[str, str], daemon_url: str) -> ToolContext:
    """The tools' context for a request with these headers (the daemon checked the token)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    scheme, _, token = lowered.get("authorization", "").partition(" ")
    token = token.strip() if scheme == "Bearer" else ""
    project = lowered.get(PROJECT_HEADER, "").strip() or GLOBAL_PROJECT
    # one id per token: handoffs an agent accepts over HTTP are recorded as that caller's
    session = "mcp-http-" + hashlib.sha256(token.encode()).hexdigest()[:12]
    api = MemoryAPI(DaemonClient(daemon_url, token or None, API_TIMEOUT_S))
    return ToolContext(api=api, workdir=NO_WORKDIR, project=project, session_id=session)


class _CallerMiddleware:
    def __init__(self, daemon_url: str) -> None:
        self.daemon_url = daemon_url

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        # the SDK attaches the HTTP request the message came in (its headers) to the context
        headers = getattr(ctx.request, "headers", None) or {}
        reset = _caller.set(caller_context(headers, self.daemon_url))
        try:
            return await call_next(ctx)
        finally:
            _caller.reset(reset)


def session_manager(daemon_url: str) -> StreamableHTTPSessionManager:
    """The SDK's Streamable HTTP transport for the tools; the daemon's own middleware already
    checked the token, Host and Origin, so the SDK's checks of them are off."""
    server = build_server(CallerContext())  # type: ignore[arg-type]  # ToolContext's shape, per request
    server.middleware.append(_CallerMiddleware(daemon_url))
    return StreamableHTTPSessionManager(
        app=server._lowlevel_server, stateless=True, json_response=True,
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False))


def asgi_app(manager: StreamableHTTPSessionManager) -> StreamableHTTPASGIApp:
    return StreamableHTTPASGIApp(manager)
