"""SQLite's own consistency check of the database file, on a read-only connection.

``PRAGMA integrity_check`` (not ``quick_check``): it also verifies that every index matches its
table, which is what a torn write most often breaks, and the index of a memory daemon is small
enough for it (seconds for hundreds of megabytes). Safe next to a running daemon: WAL readers
never block the writer.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ai_memory.store.connection import open_read_connection

MAX_PROBLEMS = 20


def quick_problems(db_path: Path) -> list[str]:
    """[] when the file opens as a database and ``PRAGMA quick_check`` passes: the check at each
    start (it skips matching indexes to tables, so it reads the file once)."""
    try:
        conn = open_read_connection(db_path)
        try:
            rows = conn.execute("PRAGMA quick_check(5)").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:  # "file is not a database", "database disk image is malformed"
        return [str(exc)]
    messages = [str(r[0]) for r in rows]
    return [] if messages == ["ok"] else messages


def integrity_problems(db_path: Path) -> list[str]:
    """[] when the database is sound; otherwise SQLite's messages (at most ``MAX_PROBLEMS``)."""
    if not db_path.exists():
        return [f"{db_path} does not exist"]
    try:
        conn = open_read_connection(db_path)
    except sqlite3.Error as exc:
        return [f"cannot open {db_path}: {exc}"]
    try:
        rows = conn.execute(f"PRAGMA integrity_check({MAX_PROBLEMS})").fetchall()
    except sqlite3.Error as exc:  # "file is not a database", "database disk image is malformed"
        return [str(exc)]
    finally:
        conn.close()
    messages = [str(r[0]) for r in rows]
    return [] if messages == ["ok"] else messages
