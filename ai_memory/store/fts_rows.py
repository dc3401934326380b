"""The full-text index rows: what FTS5 stores for an observation, a page and a page version.

FTS5 gets text already analysed by ``core.terms`` (identifiers whole and split, words stemmed),
space-separated, and only splits it at spaces: so the index, the query and the reranker read
words through one analysis and one stemmer. The project column stays as written: it is for
scoping, never for the words. Observations are only ever added, so their index keeps no copy
of the text (contentless); a page's row is replaced with the page.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from ai_memory.core.terms import index_text

# Analysed terms hold letters, digits and _ . - (a dotted or kebab identifier, a version): so
# these are token characters, and FTS5 folds case and diacritics as the query is folded too.
FTS_TOKENIZE = "unicode61 remove_diacritics 2 tokenchars '_.-'"

SCHEMA = f"""
CREATE VIRTUAL TABLE observations_fts USING fts5(title, body, project, content='', tokenize="{FTS_TOKENIZE}");
CREATE VIRTUAL TABLE pages_fts USING fts5(title, summary, body, project, tokenize="{FTS_TOKENIZE}");
CREATE VIRTUAL TABLE page_history_fts USING fts5(title, summary, body, tokenize="{FTS_TOKENIZE}");
"""


def index_observation(conn: sqlite3.Connection, rowid: int, title: str, body: str, project: str | None,
                      terms: tuple[str, str] | None = None) -> None:
    """The observation's row; ``terms``: its title and body already analysed (``observation_terms``)."""
    conn.execute("INSERT INTO observations_fts(rowid, title, body, project) VALUES (?, ?, ?, ?)",
                 (rowid, *(terms or observation_terms(title, body)), project))


def observation_terms(title: str, body: str) -> tuple[str, str]:
    return index_text(title), index_text(body)


def index_page(conn: sqlite3.Connection, page_id: int, title: str, summary: str, body: str, project: str) -> None:
    insert_page_terms(conn, page_id, page_terms(title, summary, body), project)


def page_terms(title: str, summary: str, body: str) -> tuple[str, str, str]:
    """A page's columns as its full-text row stores them."""
    return index_text(title), index_text(summary), index_text(body)


def insert_page_terms(conn: sqlite3.Connection, page_id: int, terms: tuple[str, str, str], project: str) -> None:
    conn.execute("INSERT INTO pages_fts(rowid, title, summary, body, project) VALUES (?,?,?,?,?)",
                 (page_id, *terms, project))


def index_page_version(conn: sqlite3.Connection, version_id: int, title: str, summary: str, body: str,
                       terms: tuple[str, str, str] | None = None) -> None:
    """The version's row; ``terms``: its columns already analysed (``page_terms``)."""
    conn.execute("INSERT INTO page_history_fts(rowid, title, summary, body) VALUES (?,?,?,?)",
                 (version_id, *(terms or page_terms(title, summary, body))))


def rebuild(conn: sqlite3.Connection) -> None:
    """Every full-text index made again from its rows (inside the migration's transaction)."""
    for table in ("observations_fts", "pages_fts", "page_history_fts"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in SCHEMA.strip().splitlines():
        conn.execute(statement)
    # ai-memory's own tool calls are kept for the record only, never indexed (core.own_tools).
    for r in _batches(conn, "SELECT rowid, title, body, project FROM observations"
                            " WHERE json_extract(payload, '$.ai_memory_tool') IS NULL"):
        index_observation(conn, r[0], r[1], r[2], r[3])
    for r in _batches(conn, "SELECT id, title, summary, body, project FROM pages"):
        index_page(conn, r[0], r[1], r[2], r[3], r[4])
    for r in _batches(conn, "SELECT id, title, summary, body FROM page_history"):
        index_page_version(conn, r[0], r[1], r[2], r[3])


def _batches(conn: sqlite3.Connection, sql: str, size: int = 1000) -> Iterator[sqlite3.Row]:
    """The query's rows a thousand at a time: a million observations' texts are never all in memory."""
    cursor = conn.execute(sql)
    while rows := cursor.fetchmany(size):
        yield from rows
