"""What a cache of rows read from the database is valid for, told by the database itself.

Two things make rows a cache holds wrong without adding any: a new database file (a reindex
builds one, with new rowids), and rows rewritten in place (a project renamed or merged, a
session moved to another project). Each file is made with a random id of its own, and every
store function that rewrites rows in place counts one rewrite in the same transaction. A cache
keyed on the stamp reads itself again when either changes: no one has to remember to tell it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

CREATE_SQL = """
CREATE TABLE cache_stamp (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    file_id TEXT NOT NULL,
    rewrites INTEGER NOT NULL
);
INSERT INTO cache_stamp(id, file_id, rewrites) VALUES (1, lower(hex(randomblob(16))), 0);
"""


@dataclass(frozen=True)
class CacheStamp:
    file_id: str
    rewrites: int


NO_STAMP = CacheStamp("", -1)  # what an empty cache holds: unequal to any database's


def cache_stamp(conn: sqlite3.Connection) -> CacheStamp:
    file_id, rewrites = conn.execute("SELECT file_id, rewrites FROM cache_stamp WHERE id = 1").fetchone()
    return CacheStamp(str(file_id), int(rewrites))


def stamp_and_version(conn: sqlite3.Connection) -> tuple[CacheStamp, int]:
    """The stamp and this connection's ``PRAGMA data_version`` (which changes when another
    connection commits), in one statement: a search asks before each of its cached reads, and
    under load every statement is a wait to take the GIL back."""
    file_id, rewrites, version = conn.execute(
        "SELECT s.file_id, s.rewrites, v.data_version FROM cache_stamp s, pragma_data_version v WHERE s.id = 1"
    ).fetchone()
    return CacheStamp(str(file_id), int(rewrites)), int(version)


def count_rewrite(conn: sqlite3.Connection) -> None:
    """Rows were rewritten in place (inside the writer's transaction that rewrote them)."""
    conn.execute("UPDATE cache_stamp SET rewrites = rewrites + 1 WHERE id = 1")
