"""Running the daemon in the foreground until SIGTERM/SIGINT, then draining and closing."""

from __future__ import annotations

import errno
import faulthandler
import ipaddress
import logging
import signal
import socket

from aiohttp import web

from ai_memory import logsetup
from ai_memory.config import Config
from ai_memory.core.errors import ConfigError, PortInUse
from ai_memory.datadir import ServeLock, prepare
from ai_memory.runtime import Runtime
from ai_memory.server.app import create_app

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
        # Bound before anything starts: a taken port is one line and exit 2, never "ready" first.
        sockets = bind(config.host, config.port)
        log.info("ai-memory serving data dir %s on http://%s:%d", config.data_dir, config.host, config.port)
        runtime = Runtime.build(config)
        web.run_app(
            create_app(runtime), sock=sockets, print=None,
            access_log=None, shutdown_timeout=SHUTDOWN_GRACE_S, handle_signals=True,
        )
        log.info("ai-memory stopped cleanly")
    finally:
        lock.release()


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address ``host`` resolves to (as aiohttp would bind them)."""
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
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
            sock.bind(address)
            sock.listen(128)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(f"port {port} on {host} is already in use",
                            detail="another program listens there; pick a free one with --port or [server] port") from exc
        raise ConfigError(f"cannot listen on {host} port {port}", detail=str(exc)) from exc
    return sockets
