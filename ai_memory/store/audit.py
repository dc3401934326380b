"""The audit log: who wrote, corrected or deleted what and when (append-only, triggers refuse
UPDATE and DELETE). Hook events are not audited one by one: each observation carries its owner."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.store.writer import Job, WriteTx

MAX_DETAIL = 1000


def record_audit(at: str, user: str, action: str, target: str, detail: str = "") -> Job[int]:
    def job(tx: WriteTx) -> int:
        cur = tx.conn.execute("INSERT INTO audit(at, user, action, target, detail) VALUES (?, ?, ?, ?, ?)",
                              (at, user, action, target[:500], detail[:MAX_DETAIL]))
        return int(cur.lastrowid or 0)

    return job


def list_audit(conn: sqlite3.Connection, limit: int, user: str | None = None) -> list[dict[str, Any]]:
    """The newest entries first."""
    sql, args = "SELECT id, at, user, action, target, detail FROM audit", []
    if user:
        sql, args = sql + " WHERE user = ?", [user]
    rows = conn.execute(sql + " ORDER BY id DESC LIMIT ?", (*args, limit)).fetchall()
    return [dict(r) for r in rows]


def count_audit(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM audit").fetchone()[0])
