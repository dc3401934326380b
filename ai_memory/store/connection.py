"""SQLite connections: the pragmas of the one write connection and of read-only readers, and
the explicit transaction of a connection that is not the writer's (a rebuild, a restore)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def open_write_connection(path: Path) -> sqlite3.Connection:
    """The only writable connection. WAL + synchronous=FULL: a commit is on disk when it returns.

    ``check_same_thread`` stays on: the writer thread that opens it is the only one to use it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.row_factory = sqlite3.Row
    return conn


def open_read_connection(path: Path) -> sqlite3.Connection:
    """A read-only connection; in WAL mode it never waits for the writer."""
    conn = sqlite3.connect(
        f"file:{path}?mode=ro", uri=True, isolation_level=None, timeout=30.0,
        check_same_thread=False,
    )
    conn.execute("PRAGMA query_only=ON")
    conn.execute("PRAGMA busy_timeout=30000")
    conn.row_factory = sqlite3.Row
    return conn


def inserted_rowid(cur: sqlite3.Cursor) -> int:
    """The rowid of the row ``cur``'s INSERT just made (an INSERT always sets one)."""
    rowid = cur.lastrowid
    if rowid is None:
        raise sqlite3.InterfaceError("no row was inserted")
    return rowid


@contextmanager
def immediate_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` on a connection in autocommit mode. On an error nothing
    is committed: the transaction stays open for the caller, whose ``close`` rolls it back."""
    conn.execute("BEGIN IMMEDIATE")
    yield
    conn.execute("COMMIT")
