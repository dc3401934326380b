"""How a configuration section is declared: a frozen dataclass whose fields carry their type,
default and meaning (``setting``), so that ``config.server.port`` is an ``int`` to a type checker.

``config.py`` declares the daemon's sections and reads the file and the environment into them.
The ``[client]`` section is declared here instead, below both ``config`` and ``client/``: the
client layer may not import ``config``, and types its settings with this same class.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def setting(default: Any, doc: str, *, choices: tuple[Any, ...] = (),
            between: tuple[int, int] | None = None) -> Any:
    """One key of a section: its default, what it means, and the values it may take."""
    meta = {"doc": doc, "choices": choices, "between": between}
    if isinstance(default, list):
        items = list(default)
        return dataclasses.field(default_factory=lambda: list(items), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class ClientSection:
    """``[client]``: how the CLI, hooks and MCP server reach the daemon."""

    url: str = setting("", "daemon URL for the CLI and hooks; empty: the live daemon's daemon.json, else"
                           " http://<host>:<port>")
    timeout_s: float = setting(10.0, "how long the CLI waits for the daemon")
    resilient: str = setting("auto", "breaker, outbox, local fallback: auto (when client.url is not loopback),"
                                     " always or never")
    connect_timeout_ms: int = setting(15000, "resilient client: budget to connect and get the headers")
    timeout_ms: int = setting(30000, "resilient client: budget to read the whole body")
    breaker_base_ms: int = setting(120000, "first open window of the circuit breaker (doubles per trip)")
    breaker_max_ms: int = setting(600000, "longest open window of the circuit breaker")
    breaker_trip_after: int = setting(3, "5xx or unfinished answers in a row that open the breaker")
    retry_wait_max_ms: int = setting(5000, "longest wait before retrying a 5xx (bounds Retry-After)")
