"""Journal records that are not observations: the ledger.

Today every ledger record is a row record (``store.row_journal``). Journals written before
that hold users and audit rows in an older form (``{"ledger": "user" | "audit", ...}``, one
record per change), which ``replay`` still applies, so a rebuild from an old journal keeps
them. Ledger records carry no ``id``: reindex's check of observations never counts them.
"""

from __future__ import annotations

import sqlite3
from typing import Any

LEDGER = "ledger"


def is_ledger(record: dict[str, Any]) -> bool:
    return LEDGER in record


def replay_legacy(conn: sqlite3.Connection, record: dict[str, Any]) -> None:
    """Apply one record of the older form (records replayed in journal order end in the state
    they recorded; audit rows keep their ids, so a second replay adds nothing)."""
    if record[LEDGER] == "audit":
        conn.execute("INSERT OR IGNORE INTO audit(id, at, user, action, target, detail) VALUES (?, ?, ?, ?, ?, ?)",
                     (int(record["row"]), record["at"], record["user"], record["action"], record["target"],
                      record.get("detail") or ""))
    elif record[LEDGER] == "user" and record["action"] == "add":
        conn.execute("INSERT INTO users(name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE"
                     " SET token_hash = excluded.token_hash, created_at = excluded.created_at, revoked_at = NULL",
                     (record["name"], record["token_hash"], record["at"]))
    elif record[LEDGER] == "user" and record["action"] == "revoke":
        conn.execute("UPDATE users SET revoked_at = COALESCE(revoked_at, ?) WHERE name = ?",
                     (record["at"], record["name"]))
