"""Running the daemon in the foreground until SIGTERM/SIGINT, then draining and closing."""

from __future__ import annotations

import faulthandler
import ipaddress
import logging
import signal

from aiohttp import web

from ai_memory import logsetup
from ai_memory.config import Config
from ai_memory.core.errors import ConfigError
from ai_memory.datadir import ServeLock, prepare
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
        log.info("ai-memory serving data dir %s on http://%s:%d", config.data_dir, config.host, config.port)
        runtime = Runtime.build(config)
        web.run_app(
            create_app(runtime), host=config.host, port=config.port, print=None,
            access_log=None, shutdown_timeout=10.0, handle_signals=True,
        )
        log.info("ai-memory stopped cleanly")
    finally:
        lock.release()
