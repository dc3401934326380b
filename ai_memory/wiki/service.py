"""The wiki as a service: write a page (file, index rows, commit) and bring the index in step
with the files (one path, or a full reconcile).

Files win. ``sync_path`` and ``reconcile`` only ever read files and change index rows; they
never write a page. Changes they find (edits made in Obsidian, vim, git checkout, ...) are
committed to git as external edits.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import Conflict, DiskFull
from ai_memory.core.page import ParsedPage, content_hash, is_generated, parse_page
from ai_memory.core.project_map import ProjectMap
from ai_memory.heap import IdleTrim, working
from ai_memory.store.forgetting import bury_pages, record_commit
from ai_memory.store.history import history_cursor, record_versions
from ai_memory.store.pages import (file_state, folder_pages, holds_our_page, index_page_rows, remove_page, restat_page,
                                    stale_paths)
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer, WriteTx
from ai_memory.wiki.files import atomic_write, is_link_refusal, is_page_path, page_stats, read_file, unlink_file
from ai_memory.wiki.git import Committer, committed
from ai_memory.wiki.history import new_commits, versions
from ai_memory.wiki.project_index import INDEX_NAME, render_index, written_by_us
from ai_memory.wiki.project_moves import current_path

log = logging.getLogger(__name__)
ExtraRows = Callable[[WriteTx, int], Any]


def _folder_listing(conn: sqlite3.Connection, folder: str) -> tuple[list[sqlite3.Row], bool]:
    """A project folder's pages, and whether any of them is ai-memory's own."""
    return folder_pages(conn, folder), holds_our_page(conn, folder)


@dataclass
class ReconcileReport:
    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.indexed or self.removed)


class Wiki:
    """Owns page writes and the file→index direction of the wiki."""

    def __init__(self, wiki_dir: Path, writer: Writer, reader: Reader, committer: Committer,
                 heap: IdleTrim | None = None) -> None:
        """``heap``: the daemon's trim, told when a reconcile (a stat of every page) runs."""
        self.dir = wiki_dir
        self.writer = writer
        self.reader = reader
        self.committer = committer
        self._heap = heap
        self._sync_lock = asyncio.Lock()
        self._refused: set[str] = set()  # index.md files not ours, each logged once
        self._history_lock = asyncio.Lock()
        committer.on_commit = self.read_history
        self.symlinks: list[str] = []  # links found by the last reconcile: never read, listed in status
        self.reconciles = 0  # full comparisons run since start (status: one that never stops shows here)
        # Called once new page text is in the index (the embedding job's wake-up): what waits for
        # that text need not poll the index to find it.
        self.on_indexed: Callable[[], None] = lambda: None
        # What each project name means now (``wiki.projects`` keeps it; a lifecycle verb
        # publishes its new map here before it moves a file, so every writer follows at once).
        self.project_map = ProjectMap()
        # Held while a page's place is chosen and its file written, and by a lifecycle verb while
        # it publishes its map and moves files: a page is never written into a folder a verb
        # has just emptied (its writer chose the path before, then waited for the git lock).
        self.placing = asyncio.Lock()

    def project_now(self, name: str | None, session_id: str | None = None) -> str | None:
        """The project a writer (or a client) naming ``name`` means now: an old name gives the
        project it was renamed or merged into, a moved session its new project."""
        return self.project_map.project_of(name, session_id)

    def read(self, rel: str) -> bytes:
        """A wiki file's bytes, never through a symlink (OSError as open() raises it)."""
        return read_file(self.dir, rel)[0]

    async def write_page(self, rel: str, text: str, reason: str, extra: ExtraRows | None = None) -> ParsedPage:
        """Write a page atomically, then its index rows (and ``extra`` rows) in one transaction."""
        return (await self.write_pages([(rel, text)], reason, extra))[0]

    async def write_pages(self, pages: list[tuple[str, str]], reason: str,
                          extra: ExtraRows | None = None, commit_now: bool = False) -> list[ParsedPage]:
        """Write pages in order (each atomically), index them all in one transaction, one commit.

        ``extra`` runs in that transaction with the first page's id. ``commit_now`` commits before
        returning (deliberate memories) instead of within the commit window.
        """
        self.committer.check_backlog()  # 503 while git keeps failing and too much waits for it
        await self.commit_changes_outside(await asyncio.to_thread(_existing, self.dir, [rel for rel, _ in pages]))
        written = []
        async with self.placing:
            pmap = self.project_map
            if pmap.aliases or pmap.sessions:  # a writer that chose a folder before a verb moved it: the new one
                pages = await asyncio.to_thread(lambda: [current_path(self.dir, pmap, rel, text) for rel, text in pages])
            for rel, text in pages:
                data = text.encode("utf-8")
                st = await asyncio.to_thread(atomic_write, self.dir, rel, data)
                written.append((parse_page(rel, data), st))

        def job(tx: WriteTx) -> None:
            ids = [index_page_rows(tx.conn, page, st.st_mtime_ns, st.st_size) for page, st in written]
            if extra is not None:
                extra(tx, ids[0])

        await self.writer.submit_wait(job)
        self.on_indexed()
        self.committer.note_written(len(written))
        await self.refresh_indexes({page.path.split("/", 1)[0] for page, _ in written if "/" in page.path})
        self.committer.request(reason)
        if commit_now:
            await self.committer.flush()
        return [page for page, _ in written]

    async def delete_page(self, rel: str, reason: str) -> bool:
        """Remove a page file and its index rows, committed at once. The bytes removed are
        committed first, so git history always holds what was deleted (an edit made a moment
        ago, or still inside the commit window, included)."""
        try:
            data = await asyncio.to_thread(self.read, rel)
        except FileNotFoundError:
            return False
        if not await asyncio.to_thread(committed, self.dir, {rel: data}):
            await self.committer.commit_now(f"before deleting {rel}")
        removed = await asyncio.to_thread(self.committer.exclusively, lambda: _unlink_if_committed(self.dir, rel))
        if removed is None:
            return False
        if removed is False:
            raise Conflict("the page changed and is not in git yet", detail=f"{rel}: try again in a moment")
        # a tombstone, like the sweep's: export tells mirrors, and sync carries the deletion
        await self.writer.submit_wait(bury_pages([parse_page(rel, data)], "deleted", now_iso()))
        await self.refresh_indexes({rel.split("/", 1)[0]} if "/" in rel else set())
        oid = await self.committer.commit_now(reason)
        if oid:
            await self.writer.submit_wait(record_commit([rel], oid))
        return True

    async def read_history(self) -> int:
        """Record the page versions of commits not read yet (whoever made them); the rows added."""
        async with self._history_lock:
            since = await self.reader.run(history_cursor)
            commits, head, from_scratch = await asyncio.to_thread(new_commits, self.dir, since)
            if head is None or (not commits and not from_scratch):
                return 0
            found = await asyncio.to_thread(lambda: list(versions(self.dir, commits)))
            return await self.writer.submit_wait(lambda tx: record_versions(tx.conn, found, head, from_scratch))

    async def refresh_indexes(self, folders: set[str]) -> None:
        """Rewrite each project folder's generated index.md when its listing changed. A folder
        ai-memory does not own gets none; an index.md there that ai-memory did not write is
        left alone (lint and status report it). An index edited by hand is committed before it is
        rewritten; other writes keep their commit window."""
        for folder in sorted(folders):
            if not folder or "/" in folder or folder.startswith(".") or folder in self.project_map.aliases:
                continue
            rows, owned = await self.reader.run(functools.partial(_folder_listing, folder=folder))
            if not owned:
                continue
            rel = f"{folder}/{INDEX_NAME}"
            try:
                current: bytes | None = await asyncio.to_thread(self.read, rel)
            except FileNotFoundError:
                current = None
            except OSError:  # a link, a folder, a FIFO: not a file ai-memory wrote
                current = b""
            if not written_by_us(current, rel):
                if rel not in self._refused:
                    self._refused.add(rel)
                    log.warning("not writing %s: ai-memory did not write the file there", rel)
                continue
            self._refused.discard(rel)
            text = render_index(folder, rows).encode("utf-8")
            if current == text:
                continue
            await self.commit_changes_outside({rel: current} if current is not None else {})
            try:
                await asyncio.to_thread(atomic_write, self.dir, rel, text)
            except (DiskFull, Conflict) as exc:
                # index.md is derived: the page itself is already written and indexed, so its
                # caller must not see a failure; the next change to the project rewrites it.
                log.warning("could not rewrite %s: %s", rel, exc.detail)

    async def commit_changes_outside(self, files: dict[str, bytes]) -> None:
        """Before ai-memory replaces files: one that changed outside and is not in git yet
        (someone's edit) is committed first, so history holds it."""
        if files and len(await asyncio.to_thread(committed, self.dir, files)) < len(files):
            await self.committer.commit_now(f"external edit: before ai-memory rewrites {', '.join(sorted(files)[:5])}")

    async def sync_path(self, rel: str) -> str:
        """Bring one path's index rows in step with its file: 'indexed', 'removed' or 'unchanged'."""
        if not is_page_path(rel):
            return "unchanged"
        known = await self.reader.run(lambda c: file_state(c, rel))
        try:
            data, st = await asyncio.to_thread(read_file, self.dir, rel)
        except OSError as exc:
            # gone, or a symlink now (never read through one): either way no page is there
            if not isinstance(exc, FileNotFoundError) and not is_link_refusal(exc):
                log.warning("cannot read %s: %s", rel, exc)
                return "unchanged"
            if known is None:
                return "unchanged"
            await self.writer.submit_wait(remove_page(rel))
            return "removed"
        if known is not None and known.content_hash == content_hash(data):
            if (known.mtime_ns, known.size) != (st.st_mtime_ns, st.st_size):
                # same bytes, new stat (a touch, a copy, a checkout): remember the stat, or every
                # reconcile would read and parse the file again, forever
                await self.writer.submit_wait(restat_page(rel, st.st_mtime_ns, st.st_size))
            return "unchanged"
        if is_generated(data):  # a generated index is derived, never a page
            if known is None:
                return "unchanged"
            await self.writer.submit_wait(remove_page(rel))
            return "removed"
        page = parse_page(rel, data)

        def job(tx: WriteTx) -> None:
            index_page_rows(tx.conn, page, st.st_mtime_ns, st.st_size)

        await self.writer.submit_wait(job)
        self.on_indexed()
        if page.problems:
            log.warning("page %s indexed with problems: %s", rel, "; ".join(page.problems))
        return "indexed"

    async def reconcile(self) -> ReconcileReport:
        """Compare every file with the index (mtime and size first, then content hash)."""
        # every reconcile (periodic, a folder moved, events lost, after a reindex) holds a stat of
        # every page file: the heap gives it back once they pause
        async with self._sync_lock:
            with working(self._heap):
                report = await self._compare_every_file()
        await self.read_history()  # commits made outside ai-memory (a person's git commit, a pull)
        return report

    async def _compare_every_file(self) -> ReconcileReport:
        self.reconciles += 1
        report = ReconcileReport()
        links: list[str] = []
        on_disk = await asyncio.to_thread(page_stats, self.dir, links)
        self.symlinks = links
        stale, gone = await self.reader.run(lambda c: stale_paths(c, on_disk))
        # each looked at again as it is now: a page written since the walk is no page gone
        for rel in stale + gone:
            outcome = await self.sync_path(rel)
            if outcome == "indexed":
                report.indexed.append(rel)
            elif outcome == "removed":
                report.removed.append(rel)
        if report.changed:  # asked for first: an index rewritten next to them commits them before it
            self.committer.request("external edit: reconciled files changed outside ai-memory")
            await self.refresh_indexes({rel.split("/", 1)[0] for rel in report.indexed + report.removed if "/" in rel})
        return report


def _existing(wiki_dir: Path, rels: list[str]) -> dict[str, bytes]:
    """The current bytes of those of ``rels`` that exist (about to be replaced), never read
    through a link."""
    found = {}
    for rel in rels:
        try:
            found[rel] = read_file(wiki_dir, rel)[0]
        except OSError:
            continue
    return found


def _unlink_if_committed(wiki_dir: Path, rel: str) -> bool | None:
    """Under the git lock: remove the file only if HEAD holds exactly its bytes (None: already gone)."""
    try:
        data = read_file(wiki_dir, rel)[0]
    except FileNotFoundError:
        return None
    if not committed(wiki_dir, {rel: data}):
        return False
    unlink_file(wiki_dir, rel)
    return True
