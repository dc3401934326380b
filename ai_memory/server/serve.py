"""Running the daemon in the foreground until SIGTERM/SIGINT, then draining and closing.

The daemon binds its socket itself (``--port 0`` picks a free port) and, once it serves,
records where in ``<data_dir>/daemon.json``: clients of the data dir find it there, whatever
port it got. A clean exit removes the record; a killed daemon leaves one whose pid is dead,
which clients ignore.
"""

from __future__ import annotations

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
from ai_memory.core.errors import ConfigError
from ai_memory.datadir import ServeLock, prepare, remove_endpoint, write_endpoint
from ai_memory.runtime import Runtime
from ai_memory.server.app import create_app

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(config: Config) -> None:
    """Block serving HTTP. Raises ConfigError / DataDirLocked before binding anything."""
    if not is_loopback(config.host) and not config.get("server.allow_remote"):
        raise ConfigError(
            f"refusing to bind {config.host}: it is not a loopback address",
            detail="pass --allow-remote (and protect the token) to serve other machines",
        )
    prepare(config.data_dir)
    logsetup.configure(config.sub("logs"), str(config.get("log.level")), int(config.get("log.keep_days")))
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1 <pid>` dumps every thread's stack
    lock = ServeLock(config.data_dir)
    lock.acquire()
    try:
        sock = listen(config.host, config.port)
        url = daemon_url(config.host, sock.getsockname()[1])
        log.info("ai-memory serving data dir %s on %s", config.data_dir, url)
        app = create_app(Runtime.build(config))
        app.cleanup_ctx.append(endpoint_record(config, url))
        web.run_app(app, sock=sock, print=None, access_log=None, shutdown_timeout=10.0, handle_signals=True)
        log.info("ai-memory stopped cleanly")
    finally:
        remove_endpoint(config.data_dir)
        lock.release()


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: any free port); ConfigError when taken."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}", detail=str(exc)) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}", detail=str(exc)) from exc
    return sock


def endpoint_record(config: Config, url: str) -> Callable[[web.Application], AsyncIterator[None]]:
    """A cleanup context: the record is written once the runtime is up (it runs after the
    runtime's own context) and removed as the daemon stops."""

    async def record(app: web.Application) -> AsyncIterator[None]:
        write_endpoint(config.data_dir, url)
        yield
        remove_endpoint(config.data_dir)

    return record
