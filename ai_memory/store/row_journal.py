"""Rows that exist nowhere but in the database, journaled as they change, so a rebuild keeps them.

A handoff claimed, a message popped, a rating, a tombstone, a consolidation's outcome, a user, an
audit row: what a person or an agent did, that no file holds (``store.origins``: the ``ROWS``
tables). On the one write connection, temporary triggers note the key of every row such a table
gains, changes or loses; at the end of each writer job (inside its savepoint, so a job that fails
journals nothing) the noted rows are read as they now are and become journal records of the
job's commit: ``{"ledger": "row", "table": T, "row": {...}}``, or ``"gone": {key}`` for a row
removed. Replaying the journal in order ends in the rows the live database had. Nothing has to
remember to journal: a ``ROWS`` table is journaled because it is declared one.

Journal lines may come from someone else's archive: replay takes only declared tables, only
their own columns, and only plain values.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ai_memory.store.ledger import LEDGER
from ai_memory.store.origins import JOURNALED

ROW = "row"
_CHANGES = "ai_memory_row_changes"  # a TEMP table: the keys this connection changed since the job began
_PLAIN = (str, int, float, type(None))


def install(conn: sqlite3.Connection) -> None:
    """The triggers noting changed keys, on this connection only (TEMP: nothing is stored). No
    unique constraint on the notes: a statement's own conflict clause (an upsert's) would
    override a trigger's ``OR IGNORE``."""
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_CHANGES} (tbl TEXT NOT NULL, key TEXT NOT NULL)")
    conn.execute(f"CREATE INDEX IF NOT EXISTS temp.{_CHANGES}_key ON {_CHANGES}(tbl, key)")
    for table, key in JOURNALED.items():
        for event, sides in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            notes = " ".join(_note(table, _key_json(side, key)) for side in sides)
            conn.execute(f"CREATE TEMP TRIGGER IF NOT EXISTS ai_memory_{table}_{event.lower()}"
                         f" AFTER {event} ON main.{table} BEGIN {notes} END")


def _note(table: str, key: str) -> str:
    return (f"INSERT INTO {_CHANGES}(tbl, key) SELECT '{table}', {key} WHERE NOT EXISTS"
            f" (SELECT 1 FROM {_CHANGES} WHERE tbl = '{table}' AND key = {key});")


def _key_json(side: str, key: tuple[str, ...]) -> str:
    return "json_array(" + ", ".join(f"{side}.{column}" for column in key) + ")"


def changed_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The journal records of the rows changed since the last call, in the order first changed."""
    noted = conn.execute(f"SELECT tbl, key FROM {_CHANGES} ORDER BY rowid").fetchall()
    if not noted:
        return []
    conn.execute(f"DELETE FROM {_CHANGES}")
    return [_record(conn, table, json.loads(key)) for table, key in noted]


def _record(conn: sqlite3.Connection, table: str, values: list[Any]) -> dict[str, Any]:
    key = dict(zip(JOURNALED[table], values))
    where = " AND ".join(f"{column} IS ?" for column in key)
    row = conn.execute(f"SELECT * FROM {table} WHERE {where}", tuple(key.values())).fetchone()
    if row is None:
        return {LEDGER: ROW, "table": table, "gone": key}
    return {LEDGER: ROW, "table": table, "row": {name: row[i] for i, name in enumerate(row.keys())}}


def snapshot(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """A record for every row of every journaled table as it is now: journaled once for a
    database older than its journal records, so that a rebuild keeps those rows too."""
    records = []
    for table in JOURNALED:
        cursor = conn.execute(f"SELECT * FROM {table}")
        names = [d[0] for d in cursor.description]
        records += [{LEDGER: ROW, "table": table, "row": dict(zip(names, row))} for row in cursor]
    return records


def is_row_record(record: dict[str, Any]) -> bool:
    return record.get(LEDGER) == ROW


def replay(conn: sqlite3.Connection, record: dict[str, Any]) -> None:
    """Apply one row record: the row as it was journaled, or its removal. ValueError for a
    record that names no journaled table, a column the table lacks, or a value not plain."""
    table = record.get("table")
    if not isinstance(table, str) or table not in JOURNALED:
        raise ValueError(f"a row record for an unknown table {table!r}")
    columns = _columns(conn, table)
    if "gone" in record:
        key = _plain(record["gone"], set(JOURNALED[table]))
        if set(key) != set(JOURNALED[table]):
            raise ValueError(f"a removal from {table} without its key")
        conn.execute(f"DELETE FROM {table} WHERE " + " AND ".join(f"{c} IS ?" for c in key), tuple(key.values()))
        return
    row = _plain(record.get("row"), columns)
    if not set(JOURNALED[table]) <= set(row):
        raise ValueError(f"a row of {table} without its key")
    conn.execute(f"INSERT OR REPLACE INTO {table}({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                 tuple(row.values()))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA main.table_info({table})")}


def _plain(value: Any, columns: set[str]) -> dict[str, Any]:
    """The record's columns that the table has (a newer ai-memory's extra column is left out),
    each a plain value."""
    if not isinstance(value, dict):
        raise ValueError("a row record without its row")
    out = {}
    for name, item in value.items():
        if name not in columns:
            continue
        if not isinstance(item, _PLAIN) or isinstance(item, bool):
            raise ValueError(f"column {name!r} holds a {type(item).__name__}")
        out[name] = item
    return out
