"""What happened lately: the newest pages and sessions of a project (or of all projects), and what
the SessionStart briefing lists: the latest sessions with their first and last words, and the
pinned rules, preferences and gotchas still in force."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Literal

from ai_memory.core.page import GLOBAL_PROJECT
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


def latest_sessions(conn: sqlite3.Connection, project: str, exclude_session: str, limit: int) -> list[sqlite3.Row]:
    """(id, agent, started_at, observation_count) of a project's sessions but one, the latest first."""
    return conn.execute(
        "SELECT id, agent, started_at, observation_count FROM sessions"
        " WHERE project = ? AND id != ? ORDER BY last_event_at DESC LIMIT ?",
        (project, exclude_session, limit),
    ).fetchall()


def first_prompt(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The title of a session's first prompt (None: it has none)."""
    row = conn.execute(
        "SELECT title FROM observations WHERE session_id = ? AND event = 'user-prompt'"
        " ORDER BY occurred_at, rowid LIMIT 1", (session_id,)).fetchone()
    return str(row["title"]) if row else None


def last_words(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The title of a session's last reply or compaction summary (None: it has none)."""
    row = conn.execute(
        "SELECT title FROM observations WHERE session_id = ? AND event IN ('stop', 'post-compact')"
        " ORDER BY occurred_at DESC, rowid DESC LIMIT 1", (session_id,)).fetchone()
    return str(row["title"]) if row else None


# A page still in force that ``owner`` may see, at ``now`` (bound: now, owner).
_LIVE = f"superseded_by IS NULL AND (expires_at IS NULL OR expires_at > ?) AND {visible_sql()}"


def _live_pages(conn: sqlite3.Connection, where: str, args: tuple[Any, ...], limit: int) -> list[sqlite3.Row]:
    return conn.execute(
        f"SELECT path, title, summary, body, type, project FROM pages WHERE {where} AND {_LIVE}"
        " ORDER BY updated DESC, id DESC LIMIT ?", (*args, limit)).fetchall()


def pinned_rules(conn: sqlite3.Connection, project: str, now: str, owner: str, limit: int) -> list[sqlite3.Row]:
    """The pinned rules and decisions of a project and the global ones, latest first."""
    return _live_pages(conn, "project IN (?, ?) AND pinned = 1 AND type IN ('Rule', 'Decision')",
                       (project, GLOBAL_PROJECT, now, owner), limit)


def pages_of_type(conn: sqlite3.Connection, project: str, page_type: Literal["Preference", "Gotcha"], now: str,
                  owner: str, limit: int) -> list[sqlite3.Row]:
    """A project's live pages of one type, latest first (the type is one of a few, written into
    the statement as a literal)."""
    return _live_pages(conn, f"project = ? AND type = '{page_type}'", (project, now, owner), limit)
