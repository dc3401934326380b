"""A turn's piece vectors (late interaction) by content hash and model, and the word counts
that make a word's rarity: how many stored turns hold it (the empty word: how many turns)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

# A list of observation rowids joined to their turns' pieces (bound: the rowids as JSON, the model).
_PIECES_OF = ("FROM json_each(?) w JOIN observations o ON o.rowid = w.value"
              " JOIN token_vectors t ON t.content_hash = o.embed_hash AND t.model = ?")


def insert_pieces(conn: sqlite3.Connection, model: str, content_hash: str, count: int, bits: bytes,
                  words: Iterable[str]) -> None:
    """Insert a turn's pieces (inside a writer job) and, the first time its text is stored,
    count its words."""
    added = conn.execute("INSERT OR IGNORE INTO token_vectors(content_hash, model, count, bits) VALUES (?,?,?,?)",
                         (content_hash, model, count, bits)).rowcount
    if added:
        conn.executemany(
            "INSERT INTO piece_counts(model, word, turns) VALUES (?, ?, 1)"
            " ON CONFLICT(model, word) DO UPDATE SET turns = turns + 1",
            [(model, word) for word in ("", *sorted(words))])


def has_pieces(conn: sqlite3.Connection, content_hash: str, model: str) -> bool:
    return conn.execute("SELECT 1 FROM token_vectors WHERE content_hash = ? AND model = ?",
                        (content_hash, model)).fetchone() is not None


def word_turns(conn: sqlite3.Connection, model: str, words: list[str]) -> dict[str, int]:
    """How many stored turns hold each of ``words`` (a word no turn holds is absent)."""
    marks = ",".join("?" * len(words))
    return dict(conn.execute(f"SELECT word, turns FROM piece_counts WHERE model = ? AND word IN ({marks})",
                             (model, *words)).fetchall())


def piece_counts(conn: sqlite3.Connection, model: str, rowids: list[int]) -> list[tuple[int, int]]:
    """(rowid, number of pieces) of these observations' stored pieces."""
    return conn.execute(f"SELECT w.value, t.count {_PIECES_OF}", (json.dumps(rowids), model)).fetchall()


def piece_bits(conn: sqlite3.Connection, model: str, rowids: list[int]) -> list[tuple[int, bytes]]:
    """(rowid, packed sign bits) of these observations' stored pieces."""
    return conn.execute(f"SELECT w.value, t.bits {_PIECES_OF}", (json.dumps(rowids), model)).fetchall()
