"""Handoff rows: what a session leaves for the next agent in the same place."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
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
        # owned by the user whose token delivered the session's events: in team mode another
        # user must not claim it unless it is shared
        conn.execute(
            "INSERT INTO handoffs(id, session_id, project, cwd, from_agent, summary, open_questions,"
            " files_touched, next_steps, page_path, created_at, kind, state, owner)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?, 'auto', 'open',"
            " COALESCE((SELECT owner FROM observations WHERE session_id = ? ORDER BY rowid LIMIT 1), 'local'))",
            (handoff_id, handoff["session_id"], *values, handoff["session_id"]),
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
    out["shared"] = bool(out.get("shared"))
    return out


def insert_manual_handoff(conn: sqlite3.Connection, handoff: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A handoff an agent begins on purpose (it wins over automatic ones when accepted).

    Returns (handoff, created): with an idempotency key already used by this owner, the first
    handoff and False.
    """
    key, owner = handoff.get("idempotency_key"), handoff.get("owner") or "local"
    if key:
        earlier = conn.execute("SELECT * FROM handoffs WHERE owner = ? AND idempotency_key = ?", (owner, key)).fetchone()
        if earlier is not None:
            return _decode(earlier), False
    handoff_id = new_id()
    conn.execute(
        "INSERT INTO handoffs(id, session_id, project, cwd, from_agent, to_agent, summary, open_questions,"
        " files_touched, next_steps, model, owner, shared, created_at, idempotency_key, kind, state)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, 'manual', 'open')",
        (handoff_id, handoff.get("session_id"), handoff["project"], handoff.get("cwd"), handoff.get("from_agent"),
         handoff.get("to_agent"), handoff.get("summary") or "", json.dumps(handoff.get("open_questions") or []),
         json.dumps(handoff.get("files_touched") or []), json.dumps(handoff.get("next_steps") or []),
         handoff.get("model"), owner, 1 if handoff.get("shared") else 0, handoff["created_at"], key),
    )
    return _decode(conn.execute("SELECT * FROM handoffs WHERE id = ?", (handoff_id,)).fetchone()), True


def list_handoffs(conn: sqlite3.Connection, *, owner: str, project: str | None, state: str | None,
                  limit: int = 100) -> list[dict[str, Any]]:
    """Handoffs the caller may see (its own or shared), newest first."""
    sql = "SELECT * FROM handoffs WHERE (owner = ? OR shared = 1)"
    args: list[Any] = [owner]
    if project:
        sql += " AND project = ?"
        args.append(project)
    if state:
        sql += " AND state = ?"
        args.append(state)
    rows = conn.execute(sql + " ORDER BY created_at DESC LIMIT ?", (*args, limit)).fetchall()
    return [_decode(r) for r in rows]


def cancel_handoff(conn: sqlite3.Connection, handoff_id: str, owner: str) -> dict[str, Any] | None:
    """Cancel an open handoff of the caller's; None when there is no such handoff it may see.

    Raises nothing itself: the caller reads the returned state to tell 'cancelled' from 'too late'.
    """
    row = conn.execute("SELECT * FROM handoffs WHERE id = ? AND (owner = ? OR shared = 1)",
                       (handoff_id, owner)).fetchone()
    if row is None:
        return None
    # a shared handoff is visible to all, but only its owner may withdraw it
    conn.execute("UPDATE handoffs SET state = 'cancelled' WHERE id = ? AND state = 'open' AND owner = ?",
                 (handoff_id, owner))
    return _decode(conn.execute("SELECT * FROM handoffs WHERE id = ?", (handoff_id,)).fetchone())


@dataclass(frozen=True)
class Receiver:
    """Who is asking for a handoff: a session starting in a directory."""

    cwd: str
    session_id: str
    agent: str | None
    project: str | None
    owner: str


def _matches(row: sqlite3.Row, who: Receiver) -> bool:
    if row["to_agent"] and who.agent and row["to_agent"].lower() != who.agent.lower():
        return False
    if row["cwd"] and covers(row["cwd"], who.cwd):
        return True
    # A manual handoff may name only its project: any session of that project may take it.
    return row["kind"] == "manual" and not row["cwd"] and bool(who.project) and row["project"] == who.project


def claim_handoffs(conn: sqlite3.Connection, who: Receiver, *, now: str, live_after: str, expire_before: str,
                   fits: Callable[[list[dict[str, Any]]], bool] = lambda claimed: len(claimed) <= 1,
                   ) -> list[dict[str, Any]]:
    """Claim the open handoffs meant for a session starting in ``who.cwd``, best first, for as
    long as ``fits`` accepts what would be handed over (the first one always); [] when none.

    Only the caller's own handoffs and shared ones are visible. Manual handoffs come before
    automatic ones, then the newest; a handoff matches when its cwd is the receiver's cwd or a
    parent of it (by path boundary); an automatic handoff from a session that is still live (not
    ended, not compiled since its last event, and active in the last LIVE_MINUTES) is skipped. A handoff that does not fit stays open for the next session (agents that ended in
    parallel each leave one: none is dropped for another). Runs as one writer job, and each claim
    is a conditional update, so under any concurrency exactly one caller gets each handoff.
    """
    conn.execute("UPDATE handoffs SET state = 'expired' WHERE state = 'open' AND created_at < ?", (expire_before,))
    rows = conn.execute(
        "SELECT h.*, s.last_event_at AS source_last_event, s.ended_at AS source_ended,"
        " s.compiled_at AS source_compiled FROM handoffs h"
        " LEFT JOIN sessions s ON s.id = h.session_id WHERE h.state = 'open' AND (h.owner = ? OR h.shared = 1)"
        " AND COALESCE(h.session_id, '') != ? ORDER BY (h.kind = 'manual') DESC, h.created_at DESC, h.id",
        (who.owner, who.session_id)).fetchall()
    claimed: list[dict[str, Any]] = []
    for row in rows:
        # Over: ended, or compiled since its last event (a Stop and sessions.idle_minutes of quiet:
        # how an agent that never says a session ended, Qwen Code's headless runs, ends one).
        over = row["source_ended"] is not None or (row["source_compiled"] or "") >= (row["source_last_event"] or "~")
        live = not over and (row["source_last_event"] or "") > live_after
        if not _matches(row, who) or (row["kind"] != "manual" and live):
            continue
        if claimed and not fits([*claimed, _decode(row)]):
            break
        won = conn.execute(
            "UPDATE handoffs SET state = 'accepted', accepted_at = ?, accepted_by_session = ?"
            " WHERE id = ? AND state = 'open'", (now, who.session_id, row["id"])).rowcount
        if won:
            claimed.append(_decode(conn.execute("SELECT * FROM handoffs WHERE id = ?", (row["id"],)).fetchone()))
    return claimed
