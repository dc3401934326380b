"""Rows of the vector index: one float32 vector per content hash and model, written once."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable


def insert_embeddings(conn: sqlite3.Connection, model: str, dim: int, vectors: Iterable[tuple[str, bytes]]) -> None:
    """Store (content hash, float32 bytes) pairs; a hash already embedded by ``model`` keeps its row."""
    conn.executemany("INSERT OR IGNORE INTO embeddings(content_hash, model, dim, vector) VALUES (?,?,?,?)",
                     [(content_hash, model, dim, vector) for content_hash, vector in vectors])


def has_vector(conn: sqlite3.Connection, content_hash: str, model: str) -> bool:
    """Whether ``model`` has embedded the text of ``content_hash``."""
    return conn.execute("SELECT 1 FROM embeddings WHERE content_hash = ? AND model = ?",
                        (content_hash, model)).fetchone() is not None
