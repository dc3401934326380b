"""The rows a search reads beside its streams: candidate pages with their salience, which pages
are sessions with recorded turns, the turns' texts and sessions, who recorded them.

Lists of ids go in as a JSON array (``json_each``) or 500 at a time, below SQLite's limit on
bound parameters.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence

_PART = 500  # ids bound in one statement


def candidate_rows(conn: sqlite3.Connection, ids: list[int]) -> sqlite3.Cursor:
    """A cursor over these pages' rows (and salience) as plain tuples: the caller names the
    columns from its ``description``, once (``sqlite3.Row`` would be copied again)."""
    marks = ",".join("?" * len(ids))
    cursor = conn.execute(
        f"SELECT p.id, p.path, p.title, p.type, p.project, p.session_id, p.created, p.updated, p.superseded_by,"
        f" p.expires_at, p.pinned, p.summary, p.body, p.frontmatter, s.salience FROM pages p"
        f" LEFT JOIN page_stats s ON s.path = p.path WHERE p.id IN ({marks})", ids)
    cursor.row_factory = None
    return cursor


def page_kinds(conn: sqlite3.Connection, ids: list[int]) -> list[tuple[int, str, str | None]]:
    """(id, type, session id) of these pages."""
    return [(int(r[0]), r[1], r[2]) for r in conn.execute(
        "SELECT p.id, p.type, p.session_id FROM pages p JOIN json_each(?) j ON p.id = j.value", (json.dumps(ids),))]


def sessions_with_events(conn: sqlite3.Connection, session_ids: list[str], besides: Sequence[str]) -> set[str]:
    """The sessions among ``session_ids`` with at least one recorded event but the two ``besides``."""
    return {str(r[0]) for r in conn.execute(
        "SELECT value FROM json_each(?) WHERE EXISTS (SELECT 1 FROM observations"
        " WHERE session_id = value AND event NOT IN (?, ?))",
        (json.dumps(sorted(set(session_ids))), *besides))}


def turn_rows(conn: sqlite3.Connection, rowids: list[int]) -> list[tuple[int, str, str, str, str]]:
    """(rowid, id, session id, body, event) of these observations, read in one query."""
    return [(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4])) for r in conn.execute(
        "SELECT o.rowid, o.id, o.session_id, o.body, o.event FROM json_each(?) w"
        " JOIN observations o ON o.rowid = w.value", (json.dumps(rowids),))]


def observation_hit(conn: sqlite3.Connection, rowid: int) -> sqlite3.Row | None:
    """What a raw hit shows of an observation: id, session, project, event, time and body."""
    row: sqlite3.Row | None = conn.execute(
        "SELECT id, session_id, project, event, occurred_at, body FROM observations WHERE rowid = ?",
        (rowid,)).fetchone()
    return row


def observation_sessions(conn: sqlite3.Connection, rowids: list[int]) -> list[tuple[int, str, str]]:
    """(rowid, session id, event) of these observations."""
    out: list[tuple[int, str, str]] = []
    for i in range(0, len(rowids), _PART):
        part = rowids[i:i + _PART]
        marks = ",".join("?" * len(part))
        out += [(int(r[0]), str(r[1]), r[2]) for r in conn.execute(
            f"SELECT rowid, session_id, event FROM observations WHERE rowid IN ({marks})", part)]
    return out


def recorded_by(conn: sqlite3.Connection, users: Collection[str], rowids: list[int]) -> set[int]:
    """The observations among ``rowids`` that one of ``users`` recorded."""
    out: set[int] = set()
    for i in range(0, len(rowids), _PART) if users else ():
        part = rowids[i:i + _PART]
        marks = ",".join("?" * len(part))
        out |= {int(r[0]) for r in conn.execute(
            f"SELECT rowid FROM observations WHERE rowid IN ({marks}) AND owner IN ({','.join('?' * len(users))})",
            (*part, *sorted(users)))}
    return out


def observations_after(conn: sqlite3.Connection, rowid: int) -> sqlite3.Cursor:
    """A cursor over (rowid, session id, event) of the observations after ``rowid``, in rowid
    order, as plain tuples: for the caller to read a batch at a time."""
    cursor = conn.execute("SELECT rowid, session_id, event FROM observations WHERE rowid > ? ORDER BY rowid",
                          (rowid,))
    cursor.row_factory = None
    return cursor
