"""The resilient client: the daemon HTTP client behind a shared circuit breaker, with bounded retries.

Used whenever the daemon is not on this machine (``client.resilient = auto`` and a non-loopback
URL), or always/never when the config says so. Rules, and why:

- A connection failure is definitive: nobody is there, so a retry only makes the caller wait
  again. The breaker opens at once and later calls fail in ~0 ms with ``GatewayUnreachable``.
- An ambiguous failure (5xx, an answer that did not finish) may be a hiccup: retried after
  ``Retry-After`` (bounded by ``retry_wait_max_ms``) or a short backoff, and it opens the breaker
  only after ``breaker_trip_after`` failures in a row. Only requests that are safe to repeat are
  retried (reads, and writes that carry an idempotency key); the others fail after one try.
- 4xx and 429 are answers, not failures: the server is there. They pass through unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_memory.client.breaker import Breaker, BreakerPolicy
from ai_memory.client.http import DaemonClient, Reply
from ai_memory.client.locality import MODES, resilience_on
from ai_memory.core.errors import ConfigError, ConnectFailed, GatewayUnreachable, ResponseIncomplete
from ai_memory.core.settings import ClientSection

_SAFE_METHODS = {"GET", "HEAD"}
_IDEMPOTENT_POSTS = ("/v1/query", "/hook/envelope")  # a repeat changes nothing (keys, or read-only)


@dataclass(frozen=True)
class ClientSettings:
    """What the client layer needs from the config (client/ may not import config: the caller
    hands in the typed ``[client]`` section, ``config.client``, declared in ``core.settings``)."""

    url: str
    token: str | None
    state_dir: Path  # <data_dir>/client: breaker, outbox, cache
    data_dir: Path
    mode: str
    local_timeout_s: float
    connect_timeout_s: float
    timeout_s: float
    retry_wait_max_s: float
    policy: BreakerPolicy

    @classmethod
    def from_section(cls, client: ClientSection, url: str, token: str | None, data_dir: Path) -> "ClientSettings":
        mode = client.resilient.lower()
        if mode not in MODES:
            raise ConfigError(f"client.resilient must be one of {', '.join(MODES)}", detail=f"got {mode!r}")
        return cls(url=url, token=token, state_dir=data_dir / "client", data_dir=data_dir, mode=mode,
                   local_timeout_s=client.timeout_s, connect_timeout_s=client.connect_timeout_ms / 1000,
                   timeout_s=client.timeout_ms / 1000, retry_wait_max_s=client.retry_wait_max_ms / 1000,
                   policy=BreakerPolicy.from_section(client))

    @property
    def resilient(self) -> bool:
        return resilience_on(self.mode, self.url)

    def breaker(self) -> Breaker:
        return Breaker(self.state_dir, self.url, self.policy)


class ResilientClient:
    """``DaemonClient``'s interface (request, get, post, url) with the breaker and retry rules."""

    def __init__(self, settings: ClientSettings, sleep: Callable[[float], None] = time.sleep) -> None:
        self.url = settings.url
        self.settings = settings
        self.breaker = settings.breaker()
        self._http = DaemonClient(settings.url, settings.token, settings.timeout_s, settings.connect_timeout_s)
        self._sleep = sleep

    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Reply:
        repeatable = _repeatable(method, path, body, headers)
        while True:
            self._refuse_if_open()
            try:
                reply = self._http.request(method, path, body, headers)
            except ConnectFailed as exc:
                self.breaker.record_definitive(exc.detail or exc.message)
                raise
            except ResponseIncomplete as exc:
                if not self._after_ambiguous(exc.message, None, repeatable):
                    raise
                continue
            if reply.status < 500:
                self.breaker.record_success()
                return reply
            if not self._after_ambiguous(f"the daemon answered {reply.status}", reply, repeatable):
                return reply

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> Reply:
        return self.request("POST", path, body, headers)

    def _refuse_if_open(self) -> None:
        wait_ms = self.breaker.open_for_ms()
        if wait_ms:
            state = self.breaker.read()
            raise GatewayUnreachable(f"ai-memory server at {self.url} is unreachable (circuit breaker open)",
                                     retry_in_ms=wait_ms, detail=f"last error: {state.last_error}; "
                                     "see ai-memory breaker, or reset it with ai-memory breaker --reset")

    def _after_ambiguous(self, reason: str, reply: Reply | None, repeatable: bool) -> bool:
        """Count the failure; True when the caller should try again (after the wait done here)."""
        state = self.breaker.record_ambiguous(reason)
        if not repeatable or state.is_open(self.breaker.now_ms()):
            return False
        self._sleep(self._wait_s(reply, state.failures))
        return True

    def _wait_s(self, reply: Reply | None, failures: int) -> float:
        advised = _retry_after_s(reply)
        backoff = 0.25 * 2 ** max(0, failures - 1)
        return min(self.settings.retry_wait_max_s, advised if advised is not None else backoff)


def _retry_after_s(reply: Reply | None) -> float | None:
    """Retry-After in seconds (the delta form; an HTTP date is treated as absent)."""
    if reply is None:
        return None
    try:
        return max(0.0, float(reply.headers.get("retry-after", "")))
    except ValueError:
        return None


def _repeatable(method: str, path: str, body: Any, headers: dict[str, str] | None) -> bool:
    if method in _SAFE_METHODS or path.startswith(_IDEMPOTENT_POSTS):
        return True
    keyed = isinstance(body, dict) and bool(body.get("idempotency_key"))
    return keyed or bool(headers and headers.get("Idempotency-Key"))
