"""Full-text queries over the FTS5 tables: BM25 hits and counts of the rows a match holds.

The match expressions come built (``retrieval.fts``: analysed terms, scoped to projects);
FTS5 rejects some as syntax errors (``sqlite3.OperationalError``), which the caller handles.
"""

from __future__ import annotations

import sqlite3


def indexed_pages(conn: sqlite3.Connection, since: int | None = None) -> int:
    """How many pages the full-text index holds (with an id above ``since``), read from its own
    row sizes, a row per page: counting the pages table would read its rows, bodies and all."""
    sql = "SELECT COUNT(*) FROM pages_fts_docsize" + (" WHERE id > ?" if since is not None else "")
    return int(conn.execute(sql, () if since is None else (since,)).fetchone()[0] or 0)


def pages_matching(conn: sqlite3.Connection, expr: str, since: int | None) -> int:
    """How many pages (with an id above ``since``) match ``expr``."""
    if since is None:
        return int(conn.execute("SELECT COUNT(*) FROM pages_fts WHERE pages_fts MATCH ?", (expr,)).fetchone()[0])
    return int(conn.execute("SELECT COUNT(*) FROM pages_fts WHERE pages_fts MATCH ? AND rowid > ?",
                            (expr, since)).fetchone()[0])


def bm25_pages(conn: sqlite3.Connection, expr: str, weights: tuple[float, float, float, float],
               limit: int) -> list[tuple[int, float]]:
    """(page id, score) of the best pages matching ``expr``: BM25 with a weight per column."""
    w = weights
    rows = conn.execute(
        f"SELECT rowid, -bm25(pages_fts, {w[0]}, {w[1]}, {w[2]}, {w[3]}) AS score"
        " FROM pages_fts WHERE pages_fts MATCH ?"
        " ORDER BY score DESC LIMIT ?", (expr, limit)).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def bm25_observations(conn: sqlite3.Connection, expr: str, limit: int) -> list[tuple[int, float]]:
    """(observation rowid, score) of the best observations matching ``expr`` (title, body)."""
    rows = conn.execute(
        "SELECT rowid, -bm25(observations_fts, 2.0, 1.0, 0.0) AS score FROM observations_fts"
        " WHERE observations_fts MATCH ? ORDER BY score DESC LIMIT ?", (expr, limit)).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def observations_matching(conn: sqlite3.Connection, expr: str, after: int, most: int) -> int:
    """How many observations with a rowid above ``after`` match ``expr``, counted up to ``most``."""
    return int(conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM observations_fts WHERE observations_fts MATCH ? AND rowid > ?"
        " LIMIT ?)", (expr, after, most)).fetchone()[0])
