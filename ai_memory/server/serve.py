"""Running the daemon in the foreground until SIGTERM/SIGINT, then draining and closing.

The daemon binds its socket itself (``--port 0`` picks a free port) and, once it serves,
records where in ``<data_dir>/daemon.json``: clients of the data dir find it there, whatever
port it got. A clean exit removes the record; a killed daemon leaves one whose pid is dead,
which clients ignore.
"""

from __future__ import annotations

import errno
import faulthandler
import ipaddress
import logging
import signal
import socket
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from ai_memory import logsetup
from ai_memory.config import Config
from ai_memory.core.endpoint import daemon_url
from ai_memory.core.errors import ConfigError, PortInUse
from ai_memory.datadir import ServeLock, prepare, remove_endpoint, write_endpoint
from ai_memory.heap import bound_heap
from ai_memory.runtime import Runtime
from ai_memory.server.app import create_app
from ai_memory.server.asgi import AsgiMount, mount

log = logging.getLogger(__name__)
# Seconds a request still in flight at shutdown may take: a hook is acknowledged in
# milliseconds, and a client that is cut off retries (its spool or outbox keeps the event).
SHUTDOWN_GRACE_S = 1.0


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(config: Config, mounts: Callable[[str], list[AsgiMount]] = lambda url: []) -> None:
    """Block serving HTTP. Raises ConfigError / DataDirLocked before binding anything.

    ``mounts(url)`` are ASGI apps served beside the routes (the MCP tools at /mcp), given the
    URL the daemon is reached at on this machine."""
    if not is_loopback(config.host) and not config.server.allow_remote:
        raise ConfigError(
            f"refusing to bind {config.host}: it is not a loopback address",
            detail="pass --allow-remote (and protect the token) to serve other machines",
        )
    bound_heap()  # before any thread: the hook, read and write threads share two arenas
    prepare(config.data_dir)
    logsetup.configure(config.sub("logs"), config.log.level, config.log.keep_days)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1 <pid>` dumps every thread's stack
    lock = ServeLock(config.data_dir)
    lock.acquire()
    try:
        # Bound before anything starts: a taken port is one line and exit 2, never "ready" first.
        sockets = bind(config.host, config.port)
        url = daemon_url(config.host, sockets[0].getsockname()[1])
        log.info("ai-memory serving data dir %s on %s", config.data_dir, url)
        app = create_app(Runtime.build(config))
        for served in mounts(url):
            mount(app, served)
        app.cleanup_ctx.append(endpoint_record(config, url))
        web.run_app(app, sock=sockets, print=None, access_log=None,
                    shutdown_timeout=SHUTDOWN_GRACE_S, handle_signals=True)
        log.info("ai-memory stopped cleanly")
    finally:
        remove_endpoint(config.data_dir)
        lock.release()


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` resolves to (as aiohttp would bind them).
    Port 0 takes a free port for the first address and the same port for the others."""
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot resolve the host to serve on, {host!r}", detail=str(exc)) from exc
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys((i[0], i[1], i[2], i[3], i[4]) for i in infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if len(sockets) > 1:  # port 0: every address on the port the first one got
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(1024)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(f"port {port} on {host} is already in use",
                            detail="another program listens there; pick a free one with --port or [server] port") from exc
        raise ConfigError(f"cannot listen on {host} port {port}", detail=str(exc)) from exc
    return sockets


def endpoint_record(config: Config, url: str) -> Callable[[web.Application], AsyncIterator[None]]:
    """A cleanup context: the record is written once the runtime is up (it runs after the
    runtime's own context) and removed as the daemon stops."""

    async def record(app: web.Application) -> AsyncIterator[None]:
        write_endpoint(config.data_dir, url)
        yield
        remove_endpoint(config.data_dir)

    return record
