"""Users and the audit log in the raw journal, so a database rebuilt from files and journal
keeps them.

Users and audit rows exist nowhere but in the database: a damaged or deleted ``memory.sqlite``
would take every teammate's token and the whole audit trail with it. So each change to them is
also a journal record (``{"ledger": "user" | "audit", ...}``), appended in the same group
commit as the row (journal before commit, like observations), and replaying the journal in
order restores both tables. Records carry no ``id``: reindex's check of observations never
counts them. A token's hash is what the table holds; the token itself is never journaled.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.store.writer import WriteTx

LEDGER = "ledger"


def user_record(action: str, name: str, at: str, token_hash: str | None = None) -> dict[str, Any]:
    return {LEDGER: "user", "action": action, "name": name, "at": at, "token_hash": token_hash}


def audit_record(row: int, at: str, user: str, action: str, target: str, detail: str) -> dict[str, Any]:
    return {LEDGER: "audit", "row": row, "at": at, "user": user, "action": action, "target": target,
            "detail": detail}


def is_ledger(record: dict[str, Any]) -> bool:
    return LEDGER in record


def replay(conn: sqlite3.Connection, record: dict[str, Any]) -> None:
    """Apply one ledger record (records replayed in journal order end in the state they recorded;
    audit rows keep their ids, so a second replay adds nothing)."""
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


def seed(tx: WriteTx) -> int:
    """A job journaling every user and audit row as it is now: for a database from before the
    ledger, once. Returns how many records it journaled."""
    records = []
    for r in tx.conn.execute("SELECT name, token_hash, created_at, revoked_at FROM users ORDER BY created_at"):
        records.append(user_record("add", r[0], r[2], r[1]))
        if r[3] is not None:
            records.append(user_record("revoke", r[0], r[3]))
    for r in tx.conn.execute("SELECT id, at, user, action, target, detail FROM audit ORDER BY id"):
        records.append(audit_record(int(r[0]), r[1], r[2], r[3], r[4], r[5]))
    for record in records:
        tx.journal(record)
    return len(records)
