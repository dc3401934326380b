"""Rebuilding the derived database from the truth: page files and the raw journal.

``rebuild`` writes a brand-new database file next to the live one (the one place besides the
writer that opens a writable connection: to a file nobody else can see yet); ``swap_in``
replaces the live file atomically. ``check`` changes nothing and lists every difference.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ai_memory.core.page import parse_page
from ai_memory.store.carry_over import carry_over
from ai_memory.store.connection import immediate_transaction, open_read_connection, open_write_connection
from ai_memory.store import ledger, row_journal
from ai_memory.store.history import history_rows, record_versions, replay
from ai_memory.store.migrations import migrate
from ai_memory.store.observations import link_session_pages, observation_ids, scoped_key, store_record
from ai_memory.store.pages import content_hashes, store_page_rows
from ai_memory.store.projects import apply_map
from ai_memory.store.raw_log import JournalPosition, iter_lines, iter_records
from ai_memory.wiki.alias_trust import trusted
from ai_memory.wiki.files import fsync_dir, iter_pages, read_file
from ai_memory.wiki.history import all_versions, changes, new_commits
from ai_memory.wiki.project_moves import read_map
from ai_memory.wiki.read_ahead import ReadRecord, in_order, read_pages, read_records, read_versions

log = logging.getLogger(__name__)


@dataclass
class RebuildReport:
    pages: int = 0
    broken_pages: int = 0
    observations: int = 0
    duplicates: int = 0
    ledger: int = 0  # row records (and older user and audit records) replayed
    rows_only_in_old_file: int = 0  # rows of journaled tables the journal never recorded
    vector_links_kept: int = 0  # observations linked to their vectors as before, not queued again
    path: str = ""


def _progress(iterable, desc: str, show: bool, total: int | None = None):
    return tqdm(iterable, desc=desc, unit=" files" if "page" in desc else " events", file=sys.stderr,
                disable=not show, leave=False, total=total)


def rebuild(wiki_dir: Path, raw_dir: Path, db_path: Path, *, show_progress: bool = False,
            carry_from: Path | None = None, helpers: int | None = None) -> RebuildReport:
    """Build ``<db>.rebuild`` from files and journal; the live database (or ``carry_from``, a
    damaged one moved aside) is only read, for what can be made again but is costly (vectors). ``helpers``: the
    processes that read and analyse while this one inserts (``read_ahead.in_order``)."""
    new = db_path.with_name(db_path.name + ".rebuild")
    for stale in (new, new.with_name(new.name + "-wal"), new.with_name(new.name + "-shm")):
        stale.unlink(missing_ok=True)
    report = RebuildReport(path=str(new))
    conn = open_write_connection(new)
    try:
        migrate(conn)
        with immediate_transaction(conn):
            _store_pages(conn, wiki_dir, report, show_progress, helpers)
            commits, head, _ = new_commits(wiki_dir, None)
            if head is not None:  # page history, from git: what as_of searches
                # closed on an error too: its helpers stop then, not whenever the generator is collected
                with closing(in_order(read_versions, changes(wiki_dir, commits), helpers)) as versions:
                    record_versions(conn, versions, head, from_scratch=True)
            projects = trusted(wiki_dir, read_map(wiki_dir)[0])[0]  # the old names this machine applies
            apply_map(conn, projects)  # first: each replayed event lands under its project's name now
            replay_journal(conn, raw_dir, report, show_progress, helpers)
            link_session_pages(conn)
        # A damaged file may have lost rows without an error: its links are not trusted.
        report.rows_only_in_old_file, report.vector_links_kept = carry_over(conn, carry_from or db_path,
                                                                    links=carry_from is None)
        with immediate_transaction(conn):  # handoffs and messages carried over follow the projects file too
            apply_map(conn, projects)
    finally:
        conn.close()
    return report


def _store_pages(conn: sqlite3.Connection, wiki_dir: Path, report: RebuildReport, show: bool,
                 helpers: int | None) -> None:
    """Every page file's rows; one that cannot be read is logged and left out."""
    files = [(wiki_dir, rel) for rel, _ in iter_pages(wiki_dir)]
    with closing(in_order(read_pages, files, helpers)) as reads:
        for read in _progress(reads, "pages", show, total=len(files)):
            if read.error:
                log.warning("reindex: cannot read %s: %s", read.rel, read.error)
            if read.rows is None:  # unreadable, or a generated index.md: derived, not a page
                continue
            store_page_rows(conn, read.rows, read.mtime_ns, read.size)
            report.pages += 1
            report.broken_pages += bool(read.rows.page.problems)


def replay_journal(conn: sqlite3.Connection, raw_dir: Path, report: RebuildReport, show: bool = False,
                   helpers: int | None = None, after: JournalPosition | None = None) -> None:
    """Insert every journaled observation not yet present (ids and idempotency keys dedupe), and
    replay the row records (handoffs, messages, page usage, tombstones, LLM jobs, users, the
    audit log) in order. A record that cannot be stored is
    logged and skipped; a torn line is skipped. Journal lines may come from someone else's
    archive: a field missing or of another type costs its record only."""
    with closing(in_order(read_records, iter_lines(raw_dir, after), helpers)) as reads:
        for read in _progress(reads, "observations", show):
            try:
                _replay_one(conn, read, report)
            except (KeyError, TypeError, ValueError, AttributeError, sqlite3.Error) as exc:
                log.warning("reindex: skipped a journal record: %s", exc)


def _replay_one(conn: sqlite3.Connection, read: ReadRecord, report: RebuildReport) -> None:
    """One journal line: a ledger record replayed, an observation stored (or counted as a
    duplicate), a bad record logged; a torn line is nothing."""
    if read.error:
        log.warning("reindex: skipped a journal record: %s", read.error)
    elif read.ledger is not None:
        if row_journal.is_row_record(read.ledger):
            row_journal.replay(conn, read.ledger)
        else:
            ledger.replay_legacy(conn, read.ledger)
        report.ledger += 1
    elif read.observation is not None:
        prepared = read.observation
        if store_record(conn, prepared.record, prepared.payload_json, prepared.terms) is None:
            report.observations += 1
        else:
            report.duplicates += 1


def catch_up(new_db: Path, raw_dir: Path, after: JournalPosition | None = None) -> RebuildReport:
    """Replay the journal into the new file again: what was stored while it was being built.
    ``after``: the journal's position when the rebuild began reading it; what lies before is in
    the new file already (ids and keys dedupe what the rebuild read twice, and row records
    replayed in order end in their last state)."""
    report = RebuildReport(path=str(new_db))
    conn = open_write_connection(new_db)
    try:
        with immediate_transaction(conn):
            replay_journal(conn, raw_dir, report, after=after)
    finally:
        conn.close()
    return report


def swap_in(new_db: Path, db_path: Path) -> None:
    """Replace the live database with the rebuilt one. Every connection must be closed.

    The old file's -wal and -shm go first: SQLite would otherwise replay a foreign WAL.
    """
    for side in ("-wal", "-shm"):
        db_path.with_name(db_path.name + side).unlink(missing_ok=True)
    os.replace(new_db, db_path)
    fsync_dir(db_path.parent)


@dataclass
class Drift:
    differences: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.differences


def check(wiki_dir: Path, raw_dir: Path, db_path: Path) -> Drift:
    """Every difference between the files (pages, journal) and the index; changes nothing."""
    drift = Drift()
    if not db_path.exists():
        drift.differences.append(f"database missing: {db_path}")
        return drift
    try:
        conn = open_read_connection(db_path)
        indexed = content_hashes(conn)
        stored = observation_ids(conn)
        history = history_rows(conn)
    except sqlite3.Error as exc:
        drift.differences.append(f"database unreadable: {exc}")
        return drift
    conn.close()
    on_disk = dict(iter_pages(wiki_dir))
    for rel in sorted(on_disk):
        page = parse_page(rel, _bytes_or_empty(wiki_dir, rel))
        if page.generated:
            on_disk.pop(rel)
        elif rel not in indexed:
            drift.differences.append(f"page not indexed: {rel}")
        elif page.content_hash != indexed[rel]:
            drift.differences.append(f"page changed since indexed: {rel}")
    for rel in sorted(set(indexed) - set(on_disk)):
        drift.differences.append(f"indexed page has no file: {rel}")
    drift.differences += _history_drift(history, replay(all_versions(wiki_dir)))
    expected = _journal_ids(raw_dir)
    for oid in sorted(expected - stored)[:1000]:
        drift.differences.append(f"journaled observation missing from index: {oid}")
    for oid in sorted(stored - expected)[:1000]:
        drift.differences.append(f"indexed observation not in the journal: {oid}")
    return drift


def _history_drift(indexed: set, derived: set) -> list[str]:
    """Pages whose versions in the index differ from those git's history gives."""
    paths = sorted({row[0] for row in indexed ^ derived})
    return [f"page history differs from git: {path}" for path in paths[:1000]]
def _bytes_or_empty(wiki_dir: Path, rel: str) -> bytes:
    try:
        return read_file(wiki_dir, rel)[0]
    except OSError:  # removed (or replaced by a link) since the listing
        return b""


def _journal_ids(raw_dir: Path) -> set[str]:
    """The ids reindex would store: the first record per idempotency key, each id once."""
    keys: set[str] = set()
    ids: set[str] = set()
    for record in iter_records(raw_dir):
        if ledger.is_ledger(record):
            continue
        key = scoped_key(record.get("idempotency_key"), record.get("owner"))
        if key:
            if key in keys:
                continue
            keys.add(key)
        if "id" in record:
            ids.add(str(record["id"]))
    return ids
