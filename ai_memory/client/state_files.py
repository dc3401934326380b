"""Client-side state under ``<data_dir>/client/``: small SQLite files and exclusive locks that
several short-lived processes (hooks, the CLI, the MCP server) share on one machine."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def try_lock(path: Path) -> Iterator[bool]:
    """Yields True to the one process holding ``path``'s flock now, False to every other (no wait)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


@contextmanager
def state_db(path: Path, schema: str, synchronous: str) -> Iterator[sqlite3.Connection]:
    """A WAL connection to a client state file, its schema ensured; ``synchronous`` says how
    much the file's last write is worth (FULL for the only copy of a write, NORMAL for a cache)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.executescript(schema)
        yield conn
    finally:
        conn.close()
