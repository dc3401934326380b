"""What the memory holds and what happened in it, as a caller may see it: the newest pages and
sessions, the counts by kind, the projects, the session timeline, one session's events and what
memory handed that session."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import NotFound
from ai_memory.core.users import ADMIN
from ai_memory.store import meta
from ai_memory.store import recent as rows
from ai_memory.store.observations import session_exists, session_observations
from ai_memory.store.reader import Reader
from ai_memory.store.recall_given import session_given
from ai_memory.store.users import hidden_page_paths

SESSION_EVENTS = 10_000  # most events one read of a session returns


async def recent(reader: Reader, *, project: str | None, limit: int, owner: str) -> dict[str, Any]:
    """{pages, sessions}: the newest live pages ``owner`` may see and the newest sessions, of a
    project (with ``_global``) or of all."""
    now = now_iso()
    return await reader.run(lambda c: rows.recent(c, project=project, limit=limit, owner=owner, now=now))


async def memory_meta(reader: Reader, *, project: str | None, owner: str) -> dict[str, Any]:
    """Live memories by scope and kind, superseded and expired counts, projects and agents."""
    now = now_iso()
    return await reader.run(lambda c: meta.memory_meta(c, project=project, owner=owner, now=now))


async def projects(reader: Reader) -> list[dict[str, Any]]:
    """Every project with its pages, sessions and last activity, most recent first."""
    return await reader.run(meta.projects)


async def session_timeline(reader: Reader, *, project: str | None, owner: str, limit: int) -> list[dict[str, Any]]:
    """Sessions newest first, each with its page's title and the files it touched."""
    return await reader.run(lambda c: rows.session_timeline(c, project=project, owner=owner, limit=limit))


async def session_events(reader: Reader, session_id: str, limit: int = SESSION_EVENTS) -> list[dict[str, Any]]:
    """A session's observations in the order they happened; NotFound when there is no such session."""

    def read(conn: sqlite3.Connection) -> list[dict[str, Any]] | None:
        return session_observations(conn, session_id, limit) if session_exists(conn, session_id) else None

    found = await reader.run(read) if session_id else None
    if found is None:
        raise NotFound("no such session", detail=session_id[:200])
    return found


async def handed_over(reader: Reader, session_id: str, owner: str) -> list[dict[str, Any]]:
    """What the briefing and prompt recall handed ``owner`` in the session (the admin: anyone),
    in order, naming only the pages ``owner`` may see."""

    def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        hidden = hidden_page_paths(conn, owner)
        mine = None if owner == ADMIN else owner
        return [row for row in session_given(conn, session_id, mine) if row["path"] not in hidden]

    return await reader.run(read)
