"""Page history rows (for ``as_of``), written from versions read out of the wiki's git history.

A version is a page's content from the commit that made it until the commit that changed or
removed it: ``valid_from``/``valid_to`` are those commits' times. The cursor is the last commit
read, so each commit is read once, whoever made it (ai-memory, a sync, a person's ``git commit``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ai_memory.core.page import ParsedPage
from ai_memory.store.connection import inserted_rowid
from ai_memory.store.fts_rows import index_page_version


@dataclass(frozen=True)
class Version:
    """``path`` as of the commit at ``when``: its page, or None when the commit removed it."""

    path: str
    page: ParsedPage | None
    when: str
    terms: tuple[str, str, str] | None = None  # the page's columns analysed, when worked out beforehand


def history_cursor(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT commit_id FROM history_cursor WHERE id = 1").fetchone()
    return None if row is None else str(row[0])


def record_versions(conn: sqlite3.Connection, versions: Iterable[Version], cursor: str, from_scratch: bool) -> int:
    """Apply versions in commit order; ``from_scratch`` first forgets every row (history was
    rewritten, or is read for the first time). Returns the rows added."""
    if from_scratch:
        conn.execute("DELETE FROM page_history")
        conn.execute("DELETE FROM page_history_fts")
    added = 0
    for version in versions:
        current = conn.execute("SELECT id, content_hash FROM page_history WHERE path = ? AND valid_to IS NULL",
                               (version.path,)).fetchone()
        page = version.page
        if current is not None and page is not None and current[1] == page.content_hash:
            continue
        if current is not None:
            conn.execute("UPDATE page_history SET valid_to = ? WHERE id = ?", (version.when, current[0]))
        if page is not None:
            _insert(conn, page, version.when, version.terms)
            added += 1
    conn.execute("INSERT INTO history_cursor(id, commit_id) VALUES (1, ?)"
                 " ON CONFLICT(id) DO UPDATE SET commit_id = excluded.commit_id", (cursor,))
    return added


def _insert(conn: sqlite3.Connection, page: ParsedPage, when: str, terms: tuple[str, str, str] | None) -> None:
    meta = page.meta
    text = {key: None if meta.get(key) is None else str(meta.get(key)) for key in ("superseded_by", "scope", "owner")}
    cur = conn.execute(
        "INSERT INTO page_history(path, project, type, title, summary, body, content_hash, superseded_by,"
        " valid_from, scope, owner) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (page.path, page.project, page.type, page.title, page.summary, page.body, page.content_hash,
         text["superseded_by"], when, text["scope"], text["owner"]),
    )
    index_page_version(conn, inserted_rowid(cur), page.title, page.summary, page.body, terms)


def history_rows(conn: sqlite3.Connection) -> set[tuple[str, str, str, str | None]]:
    """Every version the index holds: (path, content hash, valid from, valid to)."""
    return {(r[0], r[1], r[2], r[3]) for r in
            conn.execute("SELECT path, content_hash, valid_from, valid_to FROM page_history")}


def replay(versions: Iterable[Version]) -> set[tuple[str, str, str, str | None]]:
    """The rows ``record_versions`` would hold after these versions, from nothing (for a check)."""
    rows: dict[str, list[list[Any]]] = {}
    for version in versions:
        mine = rows.setdefault(version.path, [])
        page = version.page
        if mine and mine[-1][3] is None and page is not None and mine[-1][1] == page.content_hash:
            continue
        if mine and mine[-1][3] is None:
            mine[-1][3] = version.when
        if page is not None:
            mine.append([version.path, page.content_hash, version.when, None])
    return {(row[0], row[1], row[2], row[3]) for found in rows.values() for row in found}


def page_versions(conn: sqlite3.Connection, path: str, limit: int = 50) -> list[dict[str, Any]]:
    """A page's versions from git's history, newest first: when each became true and stopped
    being, its title, body and owner (for the visibility check of the caller)."""
    rows = conn.execute(
        "SELECT valid_from, valid_to, title, summary, body, content_hash, superseded_by, scope, owner"
        " FROM page_history WHERE path = ? ORDER BY valid_from DESC, id DESC LIMIT ?", (path, limit)).fetchall()
    return [dict(r) for r in rows]


def versions_matching(conn: sqlite3.Connection, expr: str, stamp: str) -> list[sqlite3.Row]:
    """The 200 best page versions valid at ``stamp`` that match ``expr`` (BM25 over title,
    summary and body), each with its ``score``."""
    return conn.execute(
        "SELECT h.*, -bm25(page_history_fts, 4.0, 2.0, 1.0) AS score FROM page_history_fts"
        " JOIN page_history h ON h.id = page_history_fts.rowid WHERE page_history_fts MATCH ?"
        " AND h.valid_from <= ? AND (h.valid_to IS NULL OR h.valid_to > ?) ORDER BY score DESC LIMIT 200",
        (expr, stamp, stamp)).fetchall()
