"""What the embedding job has yet to embed, and the marks that say an observation is done.

An observation waits while ``embed_hash`` is NULL; ``''`` says it gets no vector of its own.
``sentences_done`` says its sentence (or passage) vectors and piece vectors are stored too.
A chunk waits while no vector of its content hash exists for the model.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator


def newest_chunk_id(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM chunks").fetchone()[0])


def chunks_without_vector(conn: sqlite3.Connection, model: str, after: int, upto: int,
                          limit: int) -> list[tuple[int, str, str]]:
    """(id, content hash, text) of the chunks with an id in (after, upto] that ``model`` has no
    vector for, in id order."""
    rows = conn.execute(
        "SELECT c.id, c.content_hash, c.text FROM chunks c WHERE c.id > ? AND c.id <= ? AND NOT EXISTS"
        " (SELECT 1 FROM embeddings e WHERE e.content_hash = c.content_hash AND e.model = ?)"
        " ORDER BY c.id LIMIT ?", (after, upto, model, limit)).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def observations_without_vector(conn: sqlite3.Connection, tool_events: tuple[str, str],
                                limit: int) -> Iterator[tuple[int, str, str, str, str | None, str | None]]:
    """(rowid, title, body, event, tool name, payload) of observations not looked at yet; the
    payload only of ``tool_events`` (where passages come from). Read as the caller goes on."""
    yield from conn.execute(
        "SELECT rowid, title, body, event, tool_name, CASE WHEN event IN (?, ?) THEN payload END"
        " FROM observations WHERE embed_hash IS NULL LIMIT ?", (*tool_events, limit))


def observations_without_sentences(conn: sqlite3.Connection, limit: int) -> Iterator[tuple[int, str, str, str]]:
    """(rowid, title, body, event) of observations with their own vector but not yet their
    sentences' and pieces' (stored before those existed), newest first."""
    yield from conn.execute(
        "SELECT rowid, title, body, event FROM observations WHERE sentences_done = 0"
        " AND embed_hash IS NOT NULL ORDER BY rowid DESC LIMIT ?", (limit,))


def record_sentences(conn: sqlite3.Connection, sentences: Iterable[tuple[int, int, str]]) -> None:
    """(observation rowid, ord, content hash) of each sentence or passage vector."""
    conn.executemany(
        "INSERT OR IGNORE INTO observation_sentences(obs_rowid, ord, content_hash) VALUES (?,?,?)",
        sentences)


def mark_embedded(conn: sqlite3.Connection, linked: Iterable[tuple[int, str]]) -> None:
    """(rowid, content hash): each observation linked to its vector, and done."""
    conn.executemany("UPDATE observations SET embed_hash = ?, sentences_done = 1 WHERE rowid = ?",
                     [(content_hash, rowid) for rowid, content_hash in linked])


def mark_without_vector(conn: sqlite3.Connection, rowids: Iterable[int]) -> None:
    """Observations that get no vector (their text says nothing by meaning), done."""
    conn.executemany("UPDATE observations SET embed_hash = '', sentences_done = 1 WHERE rowid = ?",
                     [(rowid,) for rowid in rowids])


def mark_sentences_done(conn: sqlite3.Connection, rowids: Iterable[int]) -> None:
    conn.executemany("UPDATE observations SET sentences_done = 1 WHERE rowid = ?",
                     [(rowid,) for rowid in rowids])


def chunks_waiting(conn: sqlite3.Connection, model: str, after: int) -> int:
    """How many distinct texts of chunks with an id above ``after`` have no vector of ``model``."""
    return int(conn.execute(
        "SELECT COUNT(DISTINCT c.content_hash) FROM chunks c WHERE c.id > ? AND NOT EXISTS"
        " (SELECT 1 FROM embeddings e WHERE e.content_hash = c.content_hash AND e.model = ?)",
        (after, model)).fetchone()[0])


def observations_waiting(conn: sqlite3.Connection) -> int:
    """Observations not looked at yet, and those still owed their sentences."""
    unlooked = conn.execute("SELECT COUNT(*) FROM observations WHERE embed_hash IS NULL").fetchone()[0]
    unsplit = conn.execute("SELECT COUNT(*) FROM observations WHERE sentences_done = 0"
                           " AND embed_hash IS NOT NULL").fetchone()[0]
    return int(unlooked) + int(unsplit)
