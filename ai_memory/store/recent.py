"""What happened lately: the newest pages and sessions of a project (or of all projects)."""

from __future__ import annotations

import sqlite3
from typing import Any


def recent(conn: sqlite3.Connection, *, project: str | None, limit: int, owner: str, now: str) -> dict[str, Any]:
    where = "superseded_by IS NULL AND (expires_at IS NULL OR expires_at > ?) AND (scope != 'private' OR owner = ?)"
    args: list[Any] = [now, owner]
    if project:
        where += " AND project IN (?, '_global')"
        args.append(project)
    pages = conn.execute(
        f"SELECT path, title, type, project, updated, session_id FROM pages WHERE {where}"
        " ORDER BY COALESCE(updated, created, indexed_at) DESC, id DESC LIMIT ?", (*args, limit)).fetchall()
    sql = "SELECT id, agent, project, cwd, started_at, last_event_at, ended_at, observation_count, page_path FROM sessions"
    sessions = conn.execute(sql + (" WHERE project = ?" if project else "") + " ORDER BY last_event_at DESC LIMIT ?",
                            ((project, limit) if project else (limit,))).fetchall()
    return {"pages": [dict(r) for r in pages],
            "sessions": [{**dict(r), "events": r["observation_count"]} for r in sessions]}
