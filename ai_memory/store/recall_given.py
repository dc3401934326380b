"""What memory handed an agent in each session: the briefing's pages and prompt recall's items.

A session is never handed the same page twice (the briefing's pinned rules are not repeated
next to a prompt, nor an item an earlier prompt got), and the characters prompt recall added
are bounded per session. Rows are the caller's: one user's calls naming another's session
neither read nor fill that session's record. Journaled rows (``store.origins``): the web view
shows them per session, and a rebuild keeps them.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ai_memory.store.writer import Job, WriteTx


@dataclass(frozen=True)
class Given:
    path: str
    source: str  # "briefing" or "prompt"
    chars: int = 0
    line: str = ""
    confidence: float | None = None


@dataclass(frozen=True)
class SessionGiven:
    paths: frozenset[str]
    prompt_chars: int  # what prompt recall has added so far


def given_in(conn: sqlite3.Connection, session_id: str, owner: str) -> SessionGiven:
    rows = conn.execute("SELECT path, source, chars FROM recall_given WHERE session_id = ? AND owner = ?",
                        (session_id, owner)).fetchall()
    return SessionGiven(frozenset(str(r[0]) for r in rows), sum(int(r[2]) for r in rows if r[1] == "prompt"))


def record_given(session_id: str, owner: str, items: Iterable[Given], at: str,
                 until: float | None = None) -> Job[bool]:
    """A writer job recording what was handed over (a page already recorded stays as it was);
    it records nothing, and returns False, once ``time.monotonic()`` is past ``until`` (the
    caller stopped waiting for the answer that hands these over)."""
    rows = [(session_id, owner, g.path, g.source, g.chars, g.line, g.confidence, at) for g in items]

    def job(tx: WriteTx) -> bool:
        if until is not None and time.monotonic() > until:
            return False
        tx.conn.executemany("INSERT OR IGNORE INTO recall_given(session_id, owner, path, source, chars, line,"
                            " confidence, given_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return True

    return job


def session_given(conn: sqlite3.Connection, session_id: str, owner: str | None) -> list[dict[str, Any]]:
    """What the session was handed, in the order it was (the web view's list): ``owner``'s
    records, everyone's for None (the admin)."""
    rows = conn.execute("SELECT path, source, chars, line, confidence, given_at, owner FROM recall_given"
                        " WHERE session_id = ? AND (? IS NULL OR owner = ?) ORDER BY id",
                        (session_id, owner, owner)).fetchall()
    return [dict(r) for r in rows]
