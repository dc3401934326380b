"""A copy of the live database file, consistent, taken while the writer goes on committing."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path


def copy_database(src: sqlite3.Connection, dest: Path, pages_per_step: int,
                  progress: Callable[[int, int], None]) -> int:
    """Copy the database of ``src`` (a read connection) to a new file ``dest`` with SQLite's
    online backup API, ``progress(pages left, pages in all)`` after each step; return the
    copy's schema version.

    One read transaction for the whole copy pins a single WAL snapshot. Without it, each commit
    of the live writer between two backup steps restarts the copy from page one, and under a
    steady stream of hooks it would never finish. The transaction stays open: closing ``src``
    ends it."""
    src.execute("BEGIN")
    src.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # the read that takes the snapshot
    dst = sqlite3.connect(dest)
    try:
        src.backup(dst, pages=pages_per_step, progress=lambda _status, left, total: progress(left, total))
        row = dst.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    finally:
        dst.close()
    return int(row[0] or 0)
