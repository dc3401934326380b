"""Handoff rows: what a session leaves for the next agent in the same place."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ai_memory.core.ids import new_id


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


def handoff_for_session(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM handoffs WHERE session_id = ? AND kind = 'auto'", (session_id,)).fetchone()
    if row is None:
        return None
    out = dict(row)
    for key in ("open_questions", "files_touched", "next_steps"):
        out[key] = json.loads(out[key])
    return out
