"""Handoff rows: what a session leaves for the next agent in the same place."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ai_memory.core.ids import new_id
from ai_memory.core.paths import covers


def upsert_auto_handoff(conn: sqlite3.Connection, handoff: dict[str, Any], page_path: str) -> str:
    """The session's automatic handoff: created once, refreshed while it is still open."""
    row = conn.execute(
        "SELECT id, state FROM handoffs WHERE session_id = ? AND kind = 'auto'", (handoff["session_id"],)
    ).fetchone()
    values = (
        handoff.get("project"), handoff.get("cwd"), handoff.get("from_agent"), handoff.get("summary") or "",
        json.dumps(handoff.get("open_questions") or []), json.dumps(handoff.get("files_touched") or []),
        json.dumps(handoff.get("next_steps") or []), page_path, handoff.get("created_at"),
    )
    if row is None:
        handoff_id = new_id()
        conn.execute(
            "INSERT INTO handoffs(id, session_id, project, cwd, from_agent, summary, open_questions,"
            " files_touched, next_steps, page_path, created_at, kind, state)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?, 'auto', 'open')",
            (handoff_id, handoff["session_id"], *values),
        )
        return handoff_id
    if row["state"] == "open":
        conn.execute(
            "UPDATE handoffs SET project=?, cwd=?, from_agent=?, summary=?, open_questions=?,"
            " files_touched=?, next_steps=?, page_path=?, created_at=? WHERE id = ?",
            (*values, row["id"]),
        )
    return str(row["id"])


def _decode(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    for key in ("open_questions", "files_touched", "next_steps"):
        out[key] = json.loads(out[key])
    return out


def claim_handoff(conn: sqlite3.Connection, *, cwd: str, session_id: str, now: str,
                  live_after: str, expire_before: str) -> dict[str, Any] | None:
    """Claim the best open handoff for a session starting in ``cwd``; None when there is none.

    Manual handoffs come before automatic ones; a handoff matches when its cwd is the receiver's
    cwd or a parent of it (by path boundary); newest wins; an automatic handoff from a session
    that is still live is skipped. Runs as one writer job, and the claim is a conditional update,
    so under any concurrency exactly one caller gets each handoff.
    """
    conn.execute("UPDATE handoffs SET state = 'expired' WHERE state = 'open' AND created_at < ?", (expire_before,))
    rows = conn.execute(
        "SELECT h.*, s.last_event_at AS source_last_event, s.ended_at AS source_ended FROM handoffs h"
        " LEFT JOIN sessions s ON s.id = h.session_id WHERE h.state = 'open'"
        " AND COALESCE(h.session_id, '') != ? ORDER BY (h.kind = 'manual') DESC, h.created_at DESC",
        (session_id,)).fetchall()
    for row in rows:
        if not row["cwd"] or not covers(row["cwd"], cwd):
            continue
        live = row["source_ended"] is None and (row["source_last_event"] or "") > live_after
        if row["kind"] != "manual" and live:
            continue
        won = conn.execute(
            "UPDATE handoffs SET state = 'accepted', accepted_at = ?, accepted_by_session = ?"
            " WHERE id = ? AND state = 'open'", (now, session_id, row["id"])).rowcount
        if not won:
            continue
        if row["kind"] == "auto":  # older automatic handoffs for the same place are now moot
            conn.execute("UPDATE handoffs SET state = 'expired' WHERE state = 'open' AND kind = 'auto'"
                         " AND project IS ? AND cwd = ? AND created_at <= ?",
                         (row["project"], row["cwd"], row["created_at"]))
        claimed = conn.execute("SELECT * FROM handoffs WHERE id = ?", (row["id"],)).fetchone()
        return _decode(claimed)
    return None
