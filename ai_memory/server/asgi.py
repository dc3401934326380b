"""Serving an ASGI application at one path of the aiohttp app (the MCP SDK's Streamable HTTP
transport is one).

The request has passed the app's middlewares first (token, Host and Origin, rate limit, JSON
errors), so what the ASGI app sees was already let in. Its body is read whole, within
what an MCP call can use (``body.WRITE``: bytes and JSON tokens); the answer is streamed back as the ASGI app sends it. The app's lifespan
(a task group the SDK keeps for its sessions) runs in a task of its own, entered and left in that
task as anyio requires, and is stopped by a cleanup context of the aiohttp app like any
background work.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from ai_memory.server.body import WRITE
from ai_memory.server.keys import BODIES, MOUNTS

Message = dict[str, Any]
ASGIApp = Callable[[dict[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                   Awaitable[None]]


Lifespan = Callable[[], AbstractAsyncContextManager[Any]]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AsgiMount:
    """An ASGI app served at ``path``: ``build()`` gives it and what must run while it serves.

    Built at the first request, not at start-up: the MCP SDK takes seconds of CPU to import, which
    a daemon whose /mcp nobody calls should not pay. ``module`` is imported first, off the event
    loop, so those seconds do not stall the requests in flight either.

    Once the app has been used, ``used_marker`` is written, and every later start builds it in the
    background: a client that gives the server a few seconds to answer (Claude Code proceeds
    without a server's tools after 5 s) must not meet those seconds of import at its first call."""

    path: str
    module: str
    build: Callable[[], tuple[ASGIApp, Lifespan]]
    methods: tuple[str, ...] = ("POST",)  # any other method is a 405 from aiohttp
    used_marker: Path | None = None


def mount(app: web.Application, served: AsgiMount) -> None:
    states = app.setdefault(MOUNTS, {})
    lazy = _Lazy(served, states)

    async def handler(request: web.Request) -> web.StreamResponse:
        return await call_asgi(await lazy.app(), request)

    for method in served.methods:
        app.router.add_route(method, served.path, handler)
    app.cleanup_ctx.append(lazy.context)


class _Lazy:
    """The mounted app, built once; its lifespan runs in a task of its own until the daemon stops."""

    def __init__(self, served: AsgiMount, states: dict[str, str]) -> None:
        self.served = served
        self._states = states
        self._states[served.path] = "not loaded"
        self._app: ASGIApp | None = None
        self._lock = asyncio.Lock()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._warming: asyncio.Task[None] | None = None

    async def app(self) -> ASGIApp:
        async with self._lock:
            if self._app is None:
                self._states[self.served.path] = "loading"
                try:
                    await asyncio.to_thread(importlib.import_module, self.served.module)
                    asgi, lifespan = self.served.build()
                    await self._start(lifespan)
                except BaseException as exc:
                    self._states[self.served.path] = f"failed: {exc!r}"[:200]
                    raise
                self._app = asgi
                self._states[self.served.path] = "ready"
                self._remember_use()
        return self._app

    def _remember_use(self) -> None:
        marker = self.served.used_marker
        if marker is not None and not marker.exists():
            try:
                marker.touch(mode=0o600)
            except OSError as exc:  # only a later start's warm-up is lost
                log.warning("cannot write %s: %s", marker, exc)

    async def _warm(self) -> None:
        try:
            await self.app()
            log.info("%s built at start-up (it was used before)", self.served.path)
        except Exception:  # the first request will meet the same error and answer it
            log.exception("building %s at start-up failed", self.served.path)

    async def _start(self, lifespan: Lifespan) -> None:
        started = asyncio.Event()

        async def hold() -> None:
            async with lifespan():
                started.set()
                await self._stopping.wait()

        self._task = asyncio.create_task(hold(), name=f"asgi-lifespan{self.served.path}")
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():
            waiter.cancel()
            await self._task  # it failed to start: its error is this request's

    async def context(self, app: web.Application) -> AsyncIterator[None]:
        marker = self.served.used_marker
        if marker is not None and marker.exists():
            self._warming = asyncio.create_task(self._warm(), name=f"asgi-warm{self.served.path}")
        yield
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
        self._stopping.set()
        if self._task is not None:
            await self._task


def _scope(request: web.Request) -> dict[str, Any]:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    local = request.transport.get_extra_info("sockname") if request.transport else None
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}", "method": request.method,
        "scheme": request.scheme, "path": request.path, "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(), "root_path": "",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()],
        "client": tuple(peer[:2]) if peer else None, "server": tuple(local[:2]) if local else None,
    }


async def call_asgi(asgi: ASGIApp, request: web.Request) -> web.StreamResponse:
    """Run one request through ``asgi`` and answer with what it sent."""
    body = await request.app[BODIES].raw(request, WRITE)  # an MCP call: a query, a memory to store, a handoff
    delivered, finished = False, asyncio.Event()
    response: web.StreamResponse | None = None

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()  # nothing more comes: the client is gone once the answer is done
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal response
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=int(message["status"]))
            for name, value in message.get("headers") or []:
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        elif message["type"] == "http.response.body" and response is not None:
            await response.write(message.get("body") or b"")
            if not message.get("more_body"):
                await response.write_eof()

    try:
        await asgi(_scope(request), receive, send)
    finally:
        finished.set()
    if response is None:
        raise RuntimeError(f"the ASGI app at {request.path} sent no answer")
    return response
