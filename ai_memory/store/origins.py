"""Where each table of the database comes from: the one place that says what is a fact and what
is a cache.

The database is derived. Every table has a source of truth outside it, from which ``reindex``
rebuilds the same rows, or is declared a cache here, with the reason it may be lost:

- ``FILES``: the wiki's page files (pages and what is read from them), its git history, and its
  projects file;
- ``EVENTS``: the raw journal's observations, replayed in order;
- ``ROWS``: the raw journal's row records: every change a writer job makes to the table is
  journaled as the row's new image (or its removal) in the job's own commit
  (``store.row_journal``), so replaying the journal in order ends in the same rows;
- ``INDEX``: a full-text index kept in step with its table in the same transaction;
- ``CACHE``: work that can be done again from the truth (vectors from the model), kept only so
  that it is not.

``tests/test_table_origins.py`` fails on a table without a declared origin, and rebuilds a
database written through every verb to check that the facts come back equal.

A migration that changes rows of a ``ROWS`` table must journal the rows it changed: the
journal's records are replayed after the migrations of the rebuilt file.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Origin(Enum):
    FILES = "files"
    EVENTS = "journal events"
    ROWS = "journal rows"
    INDEX = "index"
    CACHE = "cache"


@dataclass(frozen=True)
class TableOrigin:
    origin: Origin
    why: str
    key: tuple[str, ...] = ()  # ROWS: the columns that name a row in its journal records
    # Columns that say when or in what order this database did its work (an id handed out as rows
    # were indexed, the moment of indexing), not what happened: a rebuild gives them anew.
    bookkeeping: tuple[str, ...] = ()


TABLES: dict[str, TableOrigin] = {
    "pages": TableOrigin(Origin.FILES, "one row per page file, read from the file",
                         bookkeeping=("id", "indexed_at", "access_count", "last_access_at")),
    "page_entities": TableOrigin(Origin.FILES, "read from the page's text", bookkeeping=("page_id",)),
    "links": TableOrigin(Origin.FILES, "read from the page's text", bookkeeping=("src_id",)),
    "chunks": TableOrigin(Origin.FILES, "the page's text cut for vectors", bookkeeping=("id", "page_id")),
    "page_history": TableOrigin(Origin.FILES, "the versions of each page in the wiki's git history",
                                bookkeeping=("id",)),
    "history_cursor": TableOrigin(Origin.FILES, "the git commit the history is read up to"),
    "project_aliases": TableOrigin(Origin.FILES, "the wiki's projects file (old names)"),
    "session_projects": TableOrigin(Origin.FILES, "the wiki's projects file (moved sessions)"),
    "observations": TableOrigin(Origin.EVENTS, "each journaled event, stored as it was received",
                                bookkeeping=("embed_hash", "sentences_done")),
    "sessions": TableOrigin(Origin.EVENTS, "the journaled events of each session, and its page file",
                            bookkeeping=("compiled_at",)),
    "idempotency_keys": TableOrigin(Origin.EVENTS, "the keys of the journaled events",
                                    bookkeeping=("created_at",)),
    "handoffs": TableOrigin(Origin.ROWS, "begun, claimed, cancelled and expired by agents", key=("id",)),
    "messages": TableOrigin(Origin.ROWS, "sent, popped and cancelled by agents", key=("id",)),
    "page_stats": TableOrigin(Origin.ROWS, "feedback people and agents gave, and how often a page was used",
                              key=("path",)),
    "tombstones": TableOrigin(Origin.ROWS, "pages removed by a sweep, a delete or a purge", key=("path",)),
    "llm_jobs": TableOrigin(Origin.ROWS, "what each consolidation attempt did (a model's answer costs money)",
                            key=("id",)),
    "llm_usage": TableOrigin(Origin.ROWS, "the model calls made each UTC day, which llm.max_calls_per_day bounds",
                             key=("day",)),
    "users": TableOrigin(Origin.ROWS, "team users and the hashes of their tokens", key=("name",)),
    "audit": TableOrigin(Origin.ROWS, "who wrote, corrected or deleted what", key=("id",)),
    "recall_given": TableOrigin(Origin.ROWS, "what memory handed an agent in each session, never handed twice",
                                key=("id",)),
    "observations_fts": TableOrigin(Origin.INDEX, "observations' analysed terms"),
    "pages_fts": TableOrigin(Origin.INDEX, "pages' analysed terms"),
    "page_history_fts": TableOrigin(Origin.INDEX, "past versions' analysed terms"),
    "embeddings": TableOrigin(Origin.CACHE, "the model's vector of a text, keyed by the text's hash"),
    "token_vectors": TableOrigin(Origin.CACHE, "the model's piece vectors of a turn, keyed by its hash"),
    "piece_counts": TableOrigin(Origin.CACHE, "how many turns hold each word piece, counted from token_vectors"),
    "observation_sentences": TableOrigin(Origin.CACHE, "an observation's sentences, cut again when it is embedded"),
    "schema_migrations": TableOrigin(Origin.CACHE, "which migrations built this file"),
    "cache_stamp": TableOrigin(Origin.CACHE, "this file's own id and its rows rewritten in place, what caches of its rows"
                               " key on (store.cache_stamp): a new file is meant to have a new id"),
}

JOURNALED: dict[str, tuple[str, ...]] = {name: t.key for name, t in TABLES.items() if t.origin is Origin.ROWS}


def is_internal(name: str) -> bool:
    """SQLite's own tables and a full-text index's shadow tables: part of what owns them."""
    if name.startswith("sqlite_"):
        return True
    base, _, suffix = name.rpartition("_")
    return suffix in ("data", "idx", "content", "docsize", "config") and TABLES.get(base, None) is not None \
        and TABLES[base].origin is Origin.INDEX
