"""Cross-project messages: send, list, pop (claim once) and cancel, each one SQL statement deep."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.ids import new_id


def _expire(conn: sqlite3.Connection, now: str) -> None:
    conn.execute("UPDATE messages SET state = 'expired' WHERE state = 'open' AND expires_at IS NOT NULL"
                 " AND expires_at <= ?", (now,))


def insert_message(conn: sqlite3.Connection, message: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(message, created); a repeat of an owner's idempotency key returns the first message."""
    key, owner = message.get("idempotency_key"), message.get("owner") or "local"
    if key:
        earlier = conn.execute("SELECT id FROM messages WHERE owner = ? AND idempotency_key = ?", (owner, key)).fetchone()
        if earlier is not None:
            return get_message(conn, earlier[0]), False  # type: ignore[return-value]
    message_id = new_id()
    conn.execute(
        "INSERT INTO messages(id, to_project, from_project, from_agent, owner, body, created_at, expires_at,"
        " idempotency_key) VALUES (?,?,?,?,?,?,?,?,?)",
        (message_id, message["to_project"], message.get("from_project"), message.get("from_agent"),
         owner, message["body"], message["created_at"], message.get("expires_at"), key),
    )
    return get_message(conn, message_id), True  # type: ignore[return-value]


def get_message(conn: sqlite3.Connection, message_id: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
    return None if row is None else dict(row)


_STATE_FILTERS = {
    "open": "state = 'open' AND (expires_at IS NULL OR expires_at > :now)",
    "expired": "(state = 'expired' OR (state = 'open' AND expires_at <= :now))",
    "popped": "state = 'popped'",
    "cancelled": "state = 'cancelled'",
}


def list_messages(conn: sqlite3.Connection, *, project: str | None, state: str | None, now: str,
                  limit: int = 100) -> list[dict[str, Any]]:
    """Messages to a project (or all), oldest first; an open message past its ttl reads as expired."""
    sql = ("SELECT *, CASE WHEN state = 'open' AND expires_at <= :now THEN 'expired' ELSE state END AS live"
           " FROM messages WHERE 1=1")
    if project:
        sql += " AND to_project = :project"
    if state:
        sql += f" AND {_STATE_FILTERS[state]}"
    rows = conn.execute(sql + " ORDER BY created_at, id LIMIT :limit",
                        {"now": now, "project": project, "limit": limit}).fetchall()
    out = []
    for row in rows:
        message = dict(row)
        message["state"] = message.pop("live")
        out.append(message)
    return out


def pop_messages(conn: sqlite3.Connection, project: str, *, session_id: str | None, now: str,
                 limit: int = 1) -> list[dict[str, Any]]:
    """Claim up to ``limit`` open messages to ``project``, oldest first; each goes to one caller only."""
    _expire(conn, now)
    rows = conn.execute("SELECT id FROM messages WHERE to_project = ? AND state = 'open'"
                        " ORDER BY created_at, id LIMIT ?", (project, limit)).fetchall()
    return claim_messages(conn, [r[0] for r in rows], session_id=session_id, now=now)


def claim_messages(conn: sqlite3.Connection, ids: list[str], *, session_id: str | None,
                   now: str) -> list[dict[str, Any]]:
    """Claim these messages if still open (a conditional update each): the ones this caller won."""
    _expire(conn, now)
    popped = []
    for message_id in ids:
        won = conn.execute("UPDATE messages SET state = 'popped', popped_at = ?, popped_by_session = ?"
                           " WHERE id = ? AND state = 'open'", (now, session_id, message_id)).rowcount
        if won:
            popped.append(get_message(conn, message_id))
    return popped  # type: ignore[return-value]


def cancel_message(conn: sqlite3.Connection, message_id: str, now: str, owner: str) -> dict[str, Any] | None:
    """Cancel an open message; only its sender may (the caller compares the returned owner)."""
    _expire(conn, now)
    conn.execute("UPDATE messages SET state = 'cancelled' WHERE id = ? AND state = 'open' AND owner = ?",
                 (message_id, owner))
    return get_message(conn, message_id)
