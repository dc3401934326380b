"""The reading a rebuild hands to helper processes while its one connection writes.

A rebuild is mostly Python, and Python runs one thread at a time: reading markdown and YAML,
analysing the terms of every text, decoding the journal's JSON. Only the inserts must stay on
the rebuild's connection. So page files are read, parsed and made into their index rows
(``store.pages.page_rows``), past versions parsed and analysed, and journal records decoded and
analysed (``store.observations.prepared_record``) in helper processes, batch by batch, while
the rebuild stores the batches before; the results come back in order, so the database is the
one a rebuild in one process makes.

Helpers are started fresh (``spawn``: a daemon's threads and sockets are never forked), at a
lower priority than the daemon's searches, and only for a rebuild large enough to repay their
start (a few tenths of a second). At most ``AHEAD`` batches per helper wait, so what is read
ahead stays small whatever the size of the memory. Helpers that cannot start, cannot be handed
a batch, or die leave their batches to the rebuild's own process: the rebuild still ends, only
slower. A helper whose parent is gone (killed, so no shutdown reached it) ends itself rather
than linger. A script that rebuilds must guard its main module
(``if __name__ == "__main__":``): a spawned process imports it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import chain, islice
from pathlib import Path
from typing import TypeVar

from ai_memory.core.page import parse_page
from ai_memory.store.fts_rows import page_terms
from ai_memory.store.history import Version
from ai_memory.store.ledger import is_ledger
from ai_memory.store.observations import PreparedRecord, prepared_record, text_problem
from ai_memory.store.pages import PageRows, page_rows
from ai_memory.store.raw_log import decode_line
from ai_memory.wiki.files import read_file
from ai_memory.wiki.history import Change, version_of

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

BATCH = 64        # items a helper is handed at once
AHEAD = 4         # batches waiting per helper
HELPERS_FROM = 2_000  # fewer items than this are read in the rebuild's own process
MAX_HELPERS = 3   # past this, the one connection that inserts is the limit
HELPER_NICE = 5
PARENT_POLL_S = 1.0  # how often a helper looks whether its parent is still there
# What starting or feeding helpers raises where they cannot run: no executable to spawn, a pipe
# to a child that died at once, no semaphores on this system, a helper gone, or the descriptor
# of a resource tracker that died at once, which the next spawn is handed (ValueError).
_HELPERS_FAILED = (OSError, ImportError, NotImplementedError, ValueError, BrokenProcessPool)


def helpers_here() -> int:
    """Helpers worth starting on this machine: one core is the inserting connection's."""
    return max(0, min(MAX_HELPERS, (os.cpu_count() or 1) - 1))


def in_order(work: Callable[[list[T]], list[R]], items: Iterable[T], helpers: int | None = None) -> Generator[R, None, None]:
    """``work`` over ``items`` a batch at a time, the results in the items' order. ``helpers``:
    None, as many as ``helpers_here`` once there are HELPERS_FROM items; a number, exactly that
    many (0: all in this process). ``work`` must be a module-level function."""
    items = iter(items)
    head = list(islice(items, HELPERS_FROM)) if helpers is None else []
    count = helpers_here() if helpers is None and len(head) == HELPERS_FROM else (helpers or 0)
    items = chain(head, items)
    if count <= 0:
        while batch := list(islice(items, BATCH)):
            yield from work(batch)
        return
    pool = _Helpers(count)
    pending: deque[tuple[list[T], Future[list[R]] | None]] = deque()
    try:
        while batch := list(islice(items, BATCH)):
            pending.append((batch, pool.submit(work, batch)))
            while len(pending) >= AHEAD * count:
                yield from pool.result(work, *pending.popleft())
        while pending:
            yield from pool.result(work, *pending.popleft())
    finally:
        pool.close()


class _Helpers:
    """The helper processes of one ``in_order``. Once they fail (they cannot start or be handed
    a batch, ``_HELPERS_FAILED``, or one died: killed, out of memory), every batch not yet done
    is left to this process, after one warning."""

    def __init__(self, count: int) -> None:
        self.pool: ProcessPoolExecutor | None = None
        self.failed = False
        try:
            self.pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"),
                                            initializer=_start_helper, initargs=(os.getpid(),))
        except _HELPERS_FAILED as exc:
            self._fail(exc)

    def submit(self, work: Callable[[list[T]], list[R]], batch: list[T]) -> Future[list[R]] | None:
        """The batch handed to a helper; None: this process will do it."""
        if self.failed or self.pool is None:
            return None
        try:
            return self.pool.submit(work, batch)
        except _HELPERS_FAILED as exc:
            self._fail(exc)
            return None

    def result(self, work: Callable[[list[T]], list[R]], batch: list[T],
               future: Future[list[R]] | None) -> list[R]:
        """The batch's results, from its helper or, without one, worked out here."""
        if future is not None:
            try:
                return future.result()
            except BrokenProcessPool as exc:
                self._fail(exc)
        return work(batch)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _fail(self, exc: BaseException) -> None:
        if not self.failed:
            log.warning("helper processes stopped (%s: %s); the rest of the work is done in this process",
                        type(exc).__name__, exc)
        self.failed = True


def _start_helper(parent: int) -> None:
    """A helper runs below the daemon's searches, and ends with the process that started it."""
    try:
        os.nice(HELPER_NICE)
    except OSError:
        pass
    threading.Thread(target=_end_with, args=(parent,), name="read-ahead-parent", daemon=True).start()


def _end_with(parent: int) -> None:
    """Ends this helper once its parent is gone: a parent killed outright never shuts its pool
    down, and a helper left waiting on the pool's queue would live on. A dead process's
    children are handed to another, so the parent id changes. It is polled rather than asked of
    Linux as a signal (PR_SET_PDEATHSIG), which exists nowhere else and fires when the thread
    that started the helper ends, not its process."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


@dataclass(frozen=True)
class ReadPage:
    """One page file as a rebuild indexes it: its rows, or why it could not be read."""

    rel: str
    rows: PageRows | None  # None: unreadable (``error``), or a generated file, which is no page
    mtime_ns: int = 0
    size: int = 0
    error: str = ""


def read_pages(batch: list[tuple[Path, str]]) -> list[ReadPage]:
    """(wiki dir, relative path) → each file read, parsed and made into its index rows."""
    out = []
    for wiki_dir, rel in batch:
        try:
            data, st = read_file(wiki_dir, rel)
        except OSError as exc:
            out.append(ReadPage(rel, None, error=str(exc)))
            continue
        page = parse_page(rel, data)
        out.append(ReadPage(rel, None if page.generated else page_rows(page), st.st_mtime_ns, st.st_size))
    return out


def read_versions(batch: list[Change]) -> list[Version]:
    """Past versions parsed, with their columns analysed as their full-text rows store them."""
    out = []
    for change in batch:
        version = version_of(change)
        page = version.page
        out.append(version if page is None else
                   Version(version.path, page, version.when, page_terms(page.title, page.summary, page.body)))
    return out


@dataclass(frozen=True)
class ReadRecord:
    """One journal line: a ledger record, an observation prepared for storing, or neither
    (a torn line, or a record whose title or body is missing or not text: ``error``)."""

    ledger: dict | None = None
    observation: PreparedRecord | None = None
    error: str = ""


def read_records(batch: list[bytes]) -> list[ReadRecord]:
    out = []
    for line in batch:
        record = decode_line(line)
        if record is None:
            out.append(ReadRecord())
        elif is_ledger(record):
            out.append(ReadRecord(ledger=record))
        elif problem := text_problem(record):
            out.append(ReadRecord(error=problem))
        else:
            out.append(ReadRecord(observation=prepared_record(record)))
    return out
