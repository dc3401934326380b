"""The client's circuit breaker, kept in a file so every process and session on the machine shares it.

State (``<data_dir>/client/breaker.json``)::

    {"url", "failures", "trips", "opened_at_ms", "open_until_ms", "last_error"}

- A definitive failure (refused, DNS, connect timeout) trips the breaker at once.
- An ambiguous failure (5xx, an answer that did not finish) adds to ``failures``; the breaker
  trips when ``failures`` reaches ``trip_after``.
- A trip opens it for ``base_ms * 2**(trips-1)``, at most ``max_ms``; ``trips`` counts the trips
  since the last success, so each new trip doubles the window.
- Once the window has passed the next call is a probe: its success closes the breaker (and
  clears ``trips``), any failure re-opens it with the doubled window.
- A state written for another URL does not apply: changing the URL resets the breaker.

Writes are atomic (temp file + rename) under an ``flock`` so two processes updating at once do
not lose a failure; an unreadable file reads as a closed breaker, because a corrupt file must
never lock a client out of a healthy server. Standard library only, and light: the hook
client's drain imports it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from ai_memory.core.settings import ClientSection

FILE_NAME = "breaker.json"


@dataclass(frozen=True)
class BreakerPolicy:
    base_ms: int
    max_ms: int
    trip_after: int

    @classmethod
    def from_section(cls, client: ClientSection) -> "BreakerPolicy":
        return cls(base_ms=client.breaker_base_ms, max_ms=client.breaker_max_ms,
                   trip_after=max(1, client.breaker_trip_after))


@dataclass
class BreakerState:
    url: str = ""
    failures: int = 0
    trips: int = 0
    opened_at_ms: int = 0
    open_until_ms: int = 0
    last_error: str = ""

    def retry_in_ms(self, now_ms: int) -> int:
        return max(0, self.open_until_ms - now_ms)

    def is_open(self, now_ms: int) -> bool:
        return self.open_until_ms > now_ms

    def as_json(self, now_ms: int) -> dict[str, object]:
        state = "open" if self.is_open(now_ms) else ("half-open" if self.trips else "closed")
        return {**asdict(self), "state": state, "breaker_open": self.is_open(now_ms),
                "retry_in_ms": self.retry_in_ms(now_ms)}


def _now_ms() -> int:
    # Wall-clock, not monotonic: the deadline is shared with other processes through the file.
    return int(time.time() * 1000)


class Breaker:
    """Reads and updates the shared breaker file for one daemon URL."""

    def __init__(self, state_dir: Path, url: str, policy: BreakerPolicy,
                 clock: Callable[[], int] = _now_ms) -> None:
        self.path = state_dir / FILE_NAME
        self.url = url
        self.policy = policy
        self._clock = clock

    def now_ms(self) -> int:
        return self._clock()

    def read(self) -> BreakerState:
        """The state for this URL; a missing, corrupt or other URL's file reads as closed."""
        try:
            raw = json.loads(self.path.read_text())
            state = BreakerState(**{k: raw[k] for k in BreakerState.__dataclass_fields__ if k in raw})
        except (OSError, ValueError, TypeError):
            return BreakerState(url=self.url)
        if state.url != self.url or not isinstance(state.open_until_ms, int):
            return BreakerState(url=self.url)
        return state

    def open_for_ms(self) -> int:
        """0 when calls may go out, else how long the breaker stays open."""
        return self.read().retry_in_ms(self.now_ms())

    def record_success(self) -> None:
        state = self.read()
        if state.failures or state.trips or state.open_until_ms:
            with self._locked():
                self._write(BreakerState(url=self.url))

    def record_definitive(self, reason: str) -> BreakerState:
        """A connection failure: open at once."""
        with self._locked():
            return self._trip(self.read(), reason)

    def record_ambiguous(self, reason: str) -> BreakerState:
        """A 5xx or an unfinished answer: open after ``trip_after`` in a row (at once on a probe)."""
        with self._locked():
            state = self.read()
            state.failures += 1
            state.last_error = reason
            if state.failures >= self.policy.trip_after or state.trips:
                return self._trip(state, reason)
            self._write(state)
            return state

    def reset(self) -> None:
        with self._locked():
            self._write(BreakerState(url=self.url))

    def _trip(self, state: BreakerState, reason: str) -> BreakerState:
        now = self.now_ms()
        state.trips += 1
        window = min(self.policy.max_ms, self.policy.base_ms * 2 ** min(state.trips - 1, 30))
        state.failures, state.opened_at_ms, state.open_until_ms = 0, now, now + window
        state.last_error = reason
        self._write(state)
        return state

    def _write(self, state: BreakerState) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(state)))
        os.replace(tmp, self.path)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialize read-modify-write across processes; the lock is a side file, never replaced."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path.with_name(FILE_NAME + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
