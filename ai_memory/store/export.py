"""Rows for ``GET /v1/export``: pages, then tombstones, each in path order, after a path.

Keyset pagination (``path > ?``) rather than offsets: a page written or removed while a client
pages through does not shift the rest, so no other entry is skipped or repeated.
"""

from __future__ import annotations

import sqlite3

from ai_memory.core.users import visible_sql


def page_rows(conn: sqlite3.Connection, after: str, limit: int, owner: str) -> list[sqlite3.Row]:
    return conn.execute(
        "SELECT p.path, p.uid, p.type, p.title, p.project, p.updated FROM pages p"
        f" WHERE p.path > ? AND {visible_sql('p')} ORDER BY p.path LIMIT ?",
        (after, owner, limit)).fetchall()


def tombstone_rows(conn: sqlite3.Connection, after: str, limit: int, owner: str) -> list[sqlite3.Row]:
    """Tombstones of paths that hold no page now (a page written again after a removal is live)."""
    return conn.execute(
        "SELECT t.path, t.uid, t.type, t.title, t.project, t.reason, t.removed_at, t.git_commit, t.content_hash"
        f" FROM tombstones t WHERE t.path > ? AND {visible_sql('t')}"
        " AND NOT EXISTS (SELECT 1 FROM pages p WHERE p.path = t.path) ORDER BY t.path LIMIT ?",
        (after, owner, limit)).fetchall()
