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
ahead stays small whatever the size of the memory. A helper that dies leaves its batches to the
rebuild's own process. As with the model worker, a script that rebuilds must guard its main
module (``if __name__ == "__main__":``): a spawned process imports it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
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
from ai_memory.store.observations import PreparedRecord, prepared_record
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


def helpers_here() -> int:
    """Helpers worth starting on this machine: one core is the inserting connection's."""
    return max(0, min(MAX_HELPERS, (os.cpu_count() or 1) - 1))


def in_order(work: Callable[[list[T]], list[R]], items: Iterable[T], helpers: int | None = None) -> Iterator[R]:
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
    pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"), initializer=_lower_priority)
    pending: deque[tuple[list[T], Future[list[R]] | None]] = deque()
    try:
        while batch := list(islice(items, BATCH)):
            pending.append((batch, _submitted(pool, work, batch)))
            while len(pending) >= AHEAD * count:
                yield from _result(work, *pending.popleft())
        while pending:
            yield from _result(work, *pending.popleft())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _submitted(pool: ProcessPoolExecutor, work: Callable[[list[T]], list[R]], batch: list[T]) -> Future | None:
    """The batch handed to a helper; None once the helpers are gone."""
    try:
        return pool.submit(work, batch)
    except BrokenProcessPool:
        return None


def _result(work: Callable[[list[T]], list[R]], batch: list[T], future: Future[list[R]] | None) -> list[R]:
    """A helper's results. A helper that died (killed, out of memory) leaves its batches, and
    every batch after them, to this process: the rebuild still ends, only slower."""
    if future is not None:
        try:
            return future.result()
        except BrokenProcessPool:
            log.warning("reindex: a helper process stopped; this batch is read without it")
    return work(batch)


def _lower_priority() -> None:
    try:
        os.nice(HELPER_NICE)
    except OSError:
        pass


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
    (a torn line, or a record without a title or body: ``error``)."""

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
        else:
            try:
                out.append(ReadRecord(observation=prepared_record(record)))
            except KeyError as exc:
                out.append(ReadRecord(error=f"no {exc} in the record"))
    return out
