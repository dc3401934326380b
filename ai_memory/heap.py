"""The C allocator's settings for a long-lived process (glibc; elsewhere they do nothing).

glibc gives each thread that allocates its own arena, up to eight a core, and each arena keeps
what it once held; it also raises its mmap threshold after each large free, so the heap then
holds a large buffer's peak (a batch's activations) for the life of the process. A daemon whose
threads take turns handling hooks, reads and writes grows that way without holding more.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
QUIET_S = 2.0  # how long the work that frees most must pause before the heap is trimmed


def bound_heap(arenas: int = 2) -> None:
    """Large buffers (1 MiB and more) mapped and unmapped, never kept in the heap; ``arenas``
    arenas for all the process's threads."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 20)
        libc.mallopt(M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # not glibc: its allocator does its own thing
        pass


def trim_heap() -> None:
    """Give the pages freed since back to the system (glibc keeps them otherwise). On a large,
    fragmented heap this takes tens of milliseconds: never on an event loop."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


class IdleTrim:
    """Trims the heap once the work that frees most of it (done inside ``working``) has paused
    for ``quiet_s``: never while such work runs, nor between the steps of a burst. A trim holds
    the allocator's arenas for up to ~0.1 s on a large heap, and every thread allocates from
    them: trimmed after each commit or search, a burst would stall behind it."""

    def __init__(self, quiet_s: float = QUIET_S, trim: Callable[[], None] = trim_heap) -> None:
        self._quiet_s, self._trim = quiet_s, trim
        self._changed = threading.Condition()
        self._running = 0
        self._due: float | None = None  # when the next trim may run; None: nothing done since the last
        threading.Thread(target=self._trim_when_due, name="heap-trim", daemon=True).start()

    @property
    def busy(self) -> int:
        return self._running

    @contextmanager
    def working(self) -> Iterator[None]:
        with self._changed:
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._due = time.monotonic() + self._quiet_s
                self._changed.notify()

    def _trim_when_due(self) -> None:
        while True:
            with self._changed:
                while self._running or self._due is None or self._due > time.monotonic():
                    self._changed.wait(None if self._running or self._due is None
                                       else self._due - time.monotonic())
                self._due = None
            self._trim()


def working(trim: IdleTrim | None) -> AbstractContextManager[None]:
    """``trim.working()``, or nothing where no one trims (a CLI process, which soon exits)."""
    return trim.working() if trim is not None else nullcontext()
