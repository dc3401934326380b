"""The spool watcher: a hook client's file is delivered as soon as it lands in ``spool/``.

Hook clients of a local daemon only spool (an atomic rename into ``spool/``) and post nothing:
watchdog tells the daemon of each new file and it drains the spool at once, so delivery costs
the agent no process and no network round trip, and never waits for the daemon. The periodic
drain (``spool.drain_interval_s``) stays, for files the watcher cannot report (written while
the daemon was down, or past an inotify limit). The watcher only wakes the drain; files go
through the one ingest path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchdog.events import EventsLostEvent, FileCreatedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler

from ai_memory.wiki.watcher import ObservedDir


def is_spool_file(path: str) -> bool:
    """A finished spool file (``<ms>-<pid>.json``), not a client's temporary one (``.tmp-*``)."""
    name = Path(path).name
    return name.endswith(".json") and not name.startswith(".")


class _Handler(FileSystemEventHandler):
    def __init__(self, loop: asyncio.AbstractEventLoop, arrived: asyncio.Event) -> None:
        self._loop, self._arrived = loop, arrived

    def on_events_lost(self, event: EventsLostEvent) -> None:
        self._loop.call_soon_threadsafe(self._arrived.set)  # some arrivals went unreported: drain

    def on_any_event(self, event: FileSystemEvent) -> None:
        path = str(getattr(event, "dest_path", "") or event.src_path)
        if is_spool_file(path):
            self._loop.call_soon_threadsafe(self._arrived.set)


class SpoolWatcher(ObservedDir):
    """Owns the observer of ``spool/`` and the task that drains when a file arrives."""

    def __init__(self, spool_dir: Path, debounce_s: float = 0.02) -> None:
        super().__init__()
        self._dir = spool_dir
        self._debounce = debounce_s  # a burst of hooks becomes one drain and one group commit
        self._arrived = asyncio.Event()
        self.drains = 0

    def start(self) -> None:
        self._dir.mkdir(parents=True, exist_ok=True)
        self.observe(_Handler(asyncio.get_running_loop(), self._arrived), self._dir, recursive=False,
                     events=[FileCreatedEvent, FileMovedEvent, EventsLostEvent])  # a drain's reads are none

    async def run(self, drain: Callable[[], Awaitable[object]]) -> None:
        while True:
            await self._arrived.wait()
            await asyncio.sleep(self._debounce)
            self._arrived.clear()  # files landing from here on wake the next drain
            await drain()
            self.drains += 1
