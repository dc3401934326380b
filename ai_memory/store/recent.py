"""What happened lately: the newest pages and sessions of a project (or of all projects)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ai_memory.core.users import visible_sql


def recent(conn: sqlite3.Connection, *, project: str | None, limit: int, owner: str, now: str) -> dict[str, Any]:
    where = f"superseded_by IS NULL AND (expires_at IS NULL OR expires_at > ?) AND {visible_sql()}"
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


def session_timeline(conn: sqlite3.Connection, *, project: str | None, owner: str, limit: int) -> list[dict[str, Any]]:
    """Sessions newest first, each with its compiled page's title and the files it touched (a
    session page that is another user's private page lends neither)."""
    sql = ("SELECT s.id, s.agent, s.project, s.started_at, s.last_event_at, s.ended_at, s.observation_count,"
           " p.path AS page_path, p.title, p.frontmatter FROM sessions s LEFT JOIN pages p ON p.path = s.page_path"
           f" AND {visible_sql('p')}")
    args: list[Any] = [owner]
    if project:
        sql += " WHERE s.project = ?"
        args.append(project)
    rows = conn.execute(sql + " ORDER BY s.last_event_at DESC LIMIT ?", (*args, limit)).fetchall()
    out = []
    for row in rows:
        item = dict(row)
        meta = json.loads(item.pop("frontmatter") or "{}")
        files = meta.get("files_touched") if isinstance(meta, dict) else None
        item["files"] = [str(f) for f in files] if isinstance(files, list) else []
        out.append(item)
    return out
