"""The watcher: file-system events on wiki/ become paths to re-sync, debounced. It never writes.

watchdog calls us on its own thread; we hand each relevant path to the event loop, where a
consumer waits for a quiet moment (editors write in several steps: temp file, rename, chmod)
and then asks the Wiki to sync each path once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent, EventsLostEvent, FileAttribEvent, FileClosedEvent,
    FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from ai_memory.wiki.files import is_page_path, is_watched_dir, relative
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)

# The events that can change what a page holds, where it is or its stat (a touch: the index
# keeps the new stat; watchdog asks inotify for IN_ATTRIB with FileModifiedEvent), and a loss of
# events. With watchdog's default, reading a file (git's status, a rebuild's 100,000 reads)
# queued two events a read, and every write into a folder also reported the folder as modified,
# which the watcher took for a moved folder: every file compared again. On Linux the inotify
# mask asks for these alone; elsewhere watchdog drops the rest.
PAGE_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent, FileModifiedEvent, FileAttribEvent, FileClosedEvent, FileDeletedEvent, FileMovedEvent,
    DirCreatedEvent, DirDeletedEvent, DirMovedEvent, EventsLostEvent]
EVERY_FILE = "/"  # queued for a loss of events: no page path, so every file is compared


class _Handler(FileSystemEventHandler):
    def __init__(self, wiki_dir: Path, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str]) -> None:
        self._dir, self._loop, self._queue = wiki_dir, loop, queue

    def on_events_lost(self, event: EventsLostEvent) -> None:
        """The kernel's queue overflowed (a large checkout, a copy of thousands of files)."""
        self._loop.call_soon_threadsafe(self._queue.put_nowait, EVERY_FILE)

    def on_any_event(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            rel = relative(self._dir, Path(str(raw)))
            if rel and (is_page_path(rel) or (event.is_directory and is_watched_dir(rel))):
                self._loop.call_soon_threadsafe(self._queue.put_nowait, rel)


def stop_observer(observer: BaseObserver, timeout: float = 3.0) -> None:
    """Stop a watchdog observer, waiting at most ``timeout``: its inotify teardown can block on
    a race with its reader thread, and shutdown must stay bounded. The observer's threads are
    daemons, so one left behind does not keep the process alive."""

    def teardown() -> None:
        observer.stop()
        observer.join(timeout=timeout)

    worker = threading.Thread(target=teardown, name="watcher-stop", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        log.warning("a file watcher did not stop within %.0f s; leaving it behind", timeout)


class ObservedDir:
    """One directory under a watchdog observer (daemon threads), stopped within a bound."""

    def __init__(self) -> None:
        self._observer: BaseObserver | None = None

    def observe(self, handler: FileSystemEventHandler, path: Path, recursive: bool,
                events: list[type[FileSystemEvent]]) -> None:
        self._observer = Observer()
        self._observer.schedule(handler, str(path), recursive=recursive, event_filter=events)
        self._observer.daemon = True
        self._observer.start()

    def stop(self, timeout: float = 3.0) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            stop_observer(observer, timeout)


class WikiWatcher(ObservedDir):
    """Owns the watchdog observer and the debouncing consumer task."""

    def __init__(self, wiki: Wiki, debounce_s: float = 0.15) -> None:
        super().__init__()
        self._wiki = wiki
        self._debounce = debounce_s
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self.synced = 0

    def start(self) -> None:
        self.observe(_Handler(self._wiki.dir, asyncio.get_running_loop(), self._queue), self._wiki.dir, recursive=True,
                     events=PAGE_EVENTS)

    async def run(self) -> None:
        """Consume paths: gather a burst, wait until it is quiet, then sync each path once."""
        while True:
            pending = {await self._queue.get()}
            while True:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancel that
                # lands as an item arrives, and the daemon's shutdown then waits forever.
                try:
                    async with asyncio.timeout(self._debounce):
                        pending.add(await self._queue.get())
                except TimeoutError:
                    break
            await self._sync(pending)

    async def _sync(self, paths: set[str]) -> None:
        changed = []
        if any(not rel.endswith(".md") for rel in paths):
            # a directory moved or deleted, or events lost: the reconciler compares everything,
            # once for the burst
            report = await self._wiki.reconcile()
            changed += report.indexed + report.removed
            paths = set()
        for rel in sorted(paths):
            try:
                outcome = await self._wiki.sync_path(rel)
            except Exception:  # a page that cannot be synced must not stop the watcher
                log.exception("watcher could not sync %s", rel)
                continue
            if outcome != "unchanged":
                changed.append(rel)
        if changed:  # asked for first: an index rewritten next to them commits them before it
            self.synced += len(changed)
            self._wiki.committer.request(f"external edit: {', '.join(sorted(set(changed))[:5])}")
            await self._wiki.refresh_indexes({rel.split("/", 1)[0] for rel in changed if "/" in rel})
