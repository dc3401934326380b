"""A damaged or missing database at start-up: moved aside and rebuilt from wiki/ and raw/.

The database is derived: pages come from the files, observations from the journal, and users
and the audit log from the journal's ledger (``store.ledger``). So a ``memory.sqlite`` that no
longer opens or fails ``quick_check`` (a truncated copy, garbage, a torn disk) is renamed aside
(never deleted: it may hold what an expert can still read) and a new one is built the way
``reindex`` builds one; a missing one is rebuilt when there is anything to rebuild from. The
one line returned says what happened, for the log.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from ai_memory.store.audit import count_audit
from ai_memory.store.connection import open_read_connection
from ai_memory.store.integrity import quick_problems
from ai_memory.store.users import count_users
from ai_memory.wiki.files import iter_pages
from ai_memory.wiki.reindex import rebuild, swap_in

SIDE_FILES = ("-wal", "-shm")


def recover_database(wiki_dir: Path, raw_dir: Path, db_path: Path) -> str | None:
    """Rebuild the database if it is damaged or missing; a line saying what was done, or None."""
    if db_path.exists():
        problems = quick_problems(db_path)
        if not problems:
            return None
        aside = _move_aside(db_path)
        why = f"damaged ({problems[0][:200]}); moved aside to {aside.name}"
    elif _has_history(wiki_dir, raw_dir):
        aside, why = None, "missing"
    else:
        return None  # a new data dir: the writer creates the database
    report = rebuild(wiki_dir, raw_dir, db_path, carry_from=aside)
    swap_in(Path(report.path), db_path)
    users, audit = _counts(db_path)
    return (f"database {why}; rebuilt from wiki/ and raw/: {report.pages} pages, {report.observations} observations,"
            f" {users} users and {audit} audit entries restored")


def _has_history(wiki_dir: Path, raw_dir: Path) -> bool:
    if any(p.stat().st_size > 0 for p in raw_dir.glob("*.jsonl")):
        return True
    return next(iter_pages(wiki_dir), None) is not None


def _move_aside(db_path: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = db_path.with_name(f"{db_path.name}.damaged-{stamp}")
    n = 1
    while aside.exists():
        aside = db_path.with_name(f"{db_path.name}.damaged-{stamp}-{n}")
        n += 1
    os.replace(db_path, aside)
    for side in SIDE_FILES:  # a WAL belongs to the file it was written for
        if (old := db_path.with_name(db_path.name + side)).exists():
            os.replace(old, aside.with_name(aside.name + side))
    return aside


def _counts(db_path: Path) -> tuple[int, int]:
    conn = open_read_connection(db_path)
    try:
        return count_users(conn), count_audit(conn)
    except sqlite3.Error:
        return 0, 0
    finally:
        conn.close()
