"""What a rebuilt database takes over from the file it replaces: what can be made again but is
costly (vectors, piece vectors and the word counts made from them, by content hash; which
observation each vector belongs to), and the rows of journaled tables the journal never recorded.

The old file is attached read-only as ``old`` and read in one transaction of the new one: one
snapshot of a file a running daemon's embedding job may still be writing.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from ai_memory.store.migrations import current_version
from ai_memory.store.origins import JOURNALED

log = logging.getLogger(__name__)

_CACHED_BY_HASH = ("embeddings", "token_vectors", "piece_counts")


def carry_over(conn: sqlite3.Connection, old_db: Path, links: bool = True) -> tuple[int, int]:
    """What the old database holds that the truth does not, read in one transaction: the caches,
    vectors and piece vectors by content hash with the word counts made from them (without
    these every text went through the model again: 12 minutes at 100,000 observations), and when
    ``links`` which observation each belongs to; and a row of a journaled table that the journal
    never recorded (a database from before its tables were journaled, whose start-up has not
    journaled them yet), never over a row the journal gave. (rows only the old file had, links)."""
    if not old_db.exists():
        return 0, 0
    try:
        conn.execute("ATTACH DATABASE ? AS old", (f"file:{old_db}?mode=ro",))
    except sqlite3.Error:
        return 0, 0
    try:
        conn.execute("BEGIN IMMEDIATE")
        for table in _CACHED_BY_HASH:
            if conn.execute("SELECT 1 FROM old.sqlite_master WHERE name = ?", (table,)).fetchone():
                conn.execute(f"INSERT OR IGNORE INTO {table} SELECT * FROM old.{table}")
        kept = sum(_copy_missing(conn, table) for table in JOURNALED)
        linked = _carry_vector_links(conn) if links and _same_schema(conn) else 0
        conn.execute("COMMIT")
        return kept, linked
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        log.warning("reindex: could not carry vectors over from the old database: %s", exc)
        return 0, 0
    finally:
        try:
            conn.execute("DETACH DATABASE old")
        except sqlite3.Error:
            pass


def _copy_missing(conn: sqlite3.Connection, table: str) -> int:
    """The old file's rows of ``table`` whose key the rebuilt one lacks, by the columns both have."""
    if not conn.execute("SELECT 1 FROM old.sqlite_master WHERE name = ?", (table,)).fetchone():
        return 0
    old = {r[1] for r in conn.execute(f"PRAGMA old.table_info({table})")}
    columns = ", ".join(r[1] for r in conn.execute(f"PRAGMA main.table_info({table})") if r[1] in old)
    same_key = " AND ".join(f"n.{c} IS o.{c}" for c in JOURNALED[table])
    return conn.execute(f"INSERT OR IGNORE INTO {table}({columns}) SELECT {columns} FROM old.{table} o"
                        f" WHERE NOT EXISTS (SELECT 1 FROM main.{table} n WHERE {same_key})").rowcount


def _same_schema(conn: sqlite3.Connection) -> bool:
    """The old file is at the new one's migration: an older one may owe its observations work
    a later migration queued (piece vectors for turns that had none)."""
    try:
        old = conn.execute("SELECT MAX(version) FROM old.schema_migrations").fetchone()[0]
    except sqlite3.Error:
        return False
    return old is not None and old == current_version(conn)


# The same observation, stored from the same journal record: what its vectors were made from
# (the text, and for a tool event the payload its passages come from) is unchanged.
_SAME_OBSERVATION = ("o.id = n.id AND o.event IS n.event AND o.tool_name IS n.tool_name AND o.title IS n.title"
                     " AND o.body IS n.body AND o.payload IS n.payload")
# ... and everything the old file had for it is in the new one: its whole text's vector, its
# piece vectors if it had any, every sentence's vector.
_ALL_VECTORS_HERE = (
    "(o.embed_hash = '' OR (EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = o.embed_hash)"
    " AND (NOT EXISTS (SELECT 1 FROM old.token_vectors t WHERE t.content_hash = o.embed_hash)"
    " OR EXISTS (SELECT 1 FROM token_vectors t WHERE t.content_hash = o.embed_hash))))"
    " AND NOT EXISTS (SELECT 1 FROM old.observation_sentences s WHERE s.obs_rowid = o.rowid"
    " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.content_hash = s.content_hash))")


def _carry_vector_links(conn: sqlite3.Connection) -> int:
    """Each rebuilt observation linked to the vectors the old database had linked it to: its
    whole text's, its sentences' and its pieces' (all kept by content hash). Without this the
    embedding job linked every observation again, a batch at a time: six minutes at 110,000
    observations (an hour at a million, at that rate), while searches went without turn vectors. Inside the
    caller's transaction; on any error the job does it as before."""
    conn.execute("SAVEPOINT links")
    try:
        linked: int = conn.execute(
            "UPDATE observations AS n SET embed_hash = o.embed_hash, sentences_done = o.sentences_done"
            f" FROM old.observations AS o WHERE n.embed_hash IS NULL AND o.embed_hash IS NOT NULL"
            f" AND {_SAME_OBSERVATION} AND {_ALL_VECTORS_HERE}").rowcount
        conn.execute(
            "INSERT OR IGNORE INTO observation_sentences(obs_rowid, ord, content_hash)"
            " SELECT n.rowid, s.ord, s.content_hash FROM old.observation_sentences s"
            " JOIN old.observations o ON o.rowid = s.obs_rowid JOIN observations n ON n.id = o.id"
            f" WHERE n.embed_hash IS o.embed_hash AND n.sentences_done = 1 AND {_SAME_OBSERVATION}")
        conn.execute("RELEASE links")
        return linked
    except sqlite3.Error as exc:
        conn.execute("ROLLBACK TO links")
        conn.execute("RELEASE links")
        log.warning("reindex: observations will be linked to their vectors again: %s", exc)
        return 0
