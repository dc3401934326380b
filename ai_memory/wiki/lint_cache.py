"""Lint for a caller, run once per state of the wiki: a loop of ``GET /v1/lint`` costs one lint.

Lint reads every page file, the whole git history and the journal (~0.9 s of CPU at 1,500
pages), so its report is kept and given again while the wiki's state is the one it was made
from. That state is read cheaply on every call: git's HEAD (each commit: pages, the projects
file, the history lint compares) and the pages index's signature (its row count and newest
``indexed_at``: a page written, edited and picked up by the watcher, re-indexed or removed).
What that key cannot see is read again once the report is ``MAX_AGE_S`` old: the journal's
events against the index, a file the index has not caught up with (no watcher), a page whose
``expires_at`` has passed since, an attachment or a link in the vault. One lint runs at a time;
a caller arriving meanwhile waits for its report instead of starting another.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ai_memory.store.pages import pages_signature
from ai_memory.store.reader import Reader
from ai_memory.wiki.git import head_commit
from ai_memory.wiki.lint import LintReport, lint, visible_report

MAX_AGE_S = 60.0  # the longest a report is given again while the key stays the same


@dataclass(frozen=True)
class _Kept:
    key: tuple[object, ...]
    made: float  # the clock's time when the lint began
    report: LintReport


class LintCache:
    """The daemon's lint: the whole report kept by the wiki's state, filtered per caller."""

    def __init__(self, reader: Reader, wiki_dir: Path, raw_dir: Path, db_path: Path,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._reader = reader
        self._wiki, self._raw, self._db = wiki_dir, raw_dir, db_path
        self._clock = clock
        self._lock = asyncio.Lock()
        self._kept: _Kept | None = None
        self.runs = 0  # lints actually run

    async def lint_for(self, owner: str) -> LintReport:
        """The report ``owner`` may read (``lint.visible_report``), from the kept one when the
        wiki's state has not changed since it was made."""
        return await visible_report(owner, self._reader, await self._report())

    async def _report(self) -> LintReport:
        async with self._lock:
            key = await self._key()  # read before the lint: a change made while it runs makes the next key differ
            kept, now = self._kept, self._clock()
            if kept is not None and kept.key == key and now - kept.made < MAX_AGE_S:
                return kept.report
            # on a worker thread with its own read-only connection: it lists and hashes every
            # file, which must not hold a reader thread that searches need
            report = await asyncio.to_thread(lint, self._wiki, self._raw, self._db)
            self.runs += 1
            self._kept = _Kept(key, now, report)
            return report

    async def _key(self) -> tuple[object, ...]:
        head = await asyncio.to_thread(head_commit, self._wiki)
        return head, await self._reader.run(pages_signature)
