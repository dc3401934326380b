"""What the memory holds, in counts: so an agent can choose its search filters."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.users import visible_sql
from ai_memory.core.page import KIND_OF_TYPE



def memory_meta(conn: sqlite3.Connection, *, project: str | None, owner: str, now: str) -> dict[str, Any]:
    where, args = visible_sql(), [owner]
    if project:
        where += " AND project IN (?, '_global')"
        args.append(project)
    live = " AND superseded_by IS NULL AND (expires_at IS NULL OR expires_at > ?)"
    counts: dict[str, dict[str, int]] = {}
    for scope, page_type, n in conn.execute(
            f"SELECT scope, type, COUNT(*) FROM pages WHERE {where}{live} GROUP BY scope, type", (*args, now)):
        counts.setdefault(scope, {})[KIND_OF_TYPE.get(page_type, page_type.lower())] = n
    superseded = conn.execute(f"SELECT COUNT(*) FROM pages WHERE {where} AND superseded_by IS NOT NULL",
                              args).fetchone()[0]
    expired = conn.execute(f"SELECT COUNT(*) FROM pages WHERE {where} AND superseded_by IS NULL"
                           " AND expires_at IS NOT NULL AND expires_at <= ?", (*args, now)).fetchone()[0]
    return {"project": project, "counts": counts, "superseded": superseded, "expired": expired,
            "projects": projects(conn), "agents": _agents(conn, project)}


def projects(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project with its page and session counts and last activity, most recent first.
    A folder of a person's notes, with no page ai-memory wrote and no session, is no project."""
    found: dict[str, dict[str, Any]] = {}
    for name, pages, updated in conn.execute(
            "SELECT project, COUNT(*), MAX(updated) FROM pages GROUP BY project"
            " HAVING project = '_global' OR MAX(uid IS NOT NULL OR session_id IS NOT NULL) = 1"):
        found[name] = {"project": name, "pages": pages, "sessions": 0, "last_activity": updated}
    for name, sessions, last in conn.execute(
            "SELECT project, COUNT(*), MAX(last_event_at) FROM sessions WHERE project IS NOT NULL GROUP BY project"):
        entry = found.setdefault(name, {"project": name, "pages": 0, "sessions": 0, "last_activity": None})
        entry["sessions"] = sessions
        entry["last_activity"] = max(filter(None, (entry["last_activity"], last)), default=None)
    return sorted(found.values(), key=lambda e: e["last_activity"] or "", reverse=True)


def _agents(conn: sqlite3.Connection, project: str | None) -> list[dict[str, Any]]:
    sql = "SELECT agent, COUNT(*), MAX(last_event_at) FROM sessions"
    rows = conn.execute(sql + (" WHERE project = ?" if project else "") + " GROUP BY agent ORDER BY 3 DESC",
                        (project,) if project else ()).fetchall()
    return [{"agent": a, "sessions": n, "last_seen": last} for a, n, last in rows]
