"""The rows the in-memory vector matrices are loaded from, and what tells that they changed.

Three tables have vectors: ``chunks`` (a page's), ``observations`` (a turn's or a tool event's
own) and ``observation_sentences``. Each row read: key, group, vector, own id (for incremental
loads), embedding rowid, project. A load reads the rows added since the last one and the rows
whose vector was added since: two index ranges, one after the other (one WHERE over both tables
would scan every vector); CROSS JOIN keeps SQLite from starting the second one at the other table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Literal

VectorTable = Literal["chunks", "observations", "observation_sentences"]

_ROWS: dict[VectorTable, str] = {
    "chunks": (
        "SELECT c.page_id, c.page_id, e.vector, c.id, e.rowid, p.project FROM chunks c"
        " JOIN pages p ON p.id = c.page_id"
        " JOIN embeddings e ON e.content_hash = c.content_hash AND e.model = ? WHERE c.id > ?"
        " UNION ALL SELECT c.page_id, c.page_id, e.vector, c.id, e.rowid, p.project FROM embeddings e"
        " CROSS JOIN chunks c ON c.content_hash = e.content_hash JOIN pages p ON p.id = c.page_id"
        " WHERE e.model = ? AND e.rowid > ?"),
    "observations": (
        "SELECT o.rowid, o.session_id, e.vector, o.rowid, e.rowid, o.project FROM observations o"
        " JOIN embeddings e ON e.content_hash = o.embed_hash AND e.model = ? WHERE o.rowid > ?"
        " UNION ALL SELECT o.rowid, o.session_id, e.vector, o.rowid, e.rowid, o.project FROM embeddings e"
        " CROSS JOIN observations o ON o.embed_hash = e.content_hash WHERE e.model = ? AND e.rowid > ?"),
    "observation_sentences": (
        "SELECT s.obs_rowid, o.session_id, e.vector, s.id, e.rowid, o.project FROM observation_sentences s"
        " JOIN observations o ON o.rowid = s.obs_rowid"
        " JOIN embeddings e ON e.content_hash = s.content_hash AND e.model = ? WHERE s.id > ?"
        " UNION ALL SELECT s.obs_rowid, o.session_id, e.vector, s.id, e.rowid, o.project FROM embeddings e"
        " CROSS JOIN observation_sentences s ON s.content_hash = e.content_hash"
        " JOIN observations o ON o.rowid = s.obs_rowid WHERE e.model = ? AND e.rowid > ?"),
}


def vector_rows(conn: sqlite3.Connection, table: VectorTable, model: str, after: int,
                vectors_after: int) -> sqlite3.Cursor:
    """A cursor over the rows of ``table`` with an own id above ``after`` and those whose vector's
    rowid is above ``vectors_after`` (a row may come twice), as plain tuples."""
    cursor = conn.execute(_ROWS[table], (model, after, model, vectors_after))
    cursor.row_factory = None
    return cursor


def newest_vector(conn: sqlite3.Connection) -> int | None:
    """The highest rowid of the vectors (None: there is none)."""
    newest: int | None = conn.execute("SELECT MAX(rowid) FROM embeddings").fetchone()[0]
    return newest


def newest_row(conn: sqlite3.Connection, table: VectorTable) -> int | None:
    """The highest rowid of ``table`` (None: it is empty)."""
    newest: int | None = conn.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0]
    return newest


def row_count(conn: sqlite3.Connection, table: VectorTable) -> int:
    """A query of its own: alone, a COUNT(*) is answered from the b-tree's cell counts, while
    asked beside MAX(rowid) it walks every row of an index."""
    return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def unlinked_observations(conn: sqlite3.Connection) -> tuple[int | None, int]:
    """The oldest observation not yet linked to a vector (None: none waits), and how many wait."""
    oldest, waiting = conn.execute("SELECT MIN(rowid), COUNT(*) FROM observations WHERE embed_hash IS NULL").fetchone()
    return oldest, int(waiting)


def live_ids(conn: sqlite3.Connection, table: VectorTable) -> Iterator[int]:
    """Every id of ``table``, read as the caller goes."""
    yield from (r[0] for r in conn.execute(f"SELECT id FROM {table}"))
