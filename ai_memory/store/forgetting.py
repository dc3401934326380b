"""Rows of forgetting and feedback: what the sweep considers, tombstones, and page salience.

Usage and salience live in ``page_stats`` by path (not in the files: they must outlive a
reindex). A tombstone records a page the sweep removed (the file is in git history, commit
``git_commit``); tombstones older than ``purge_days`` are purged from the index.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ai_memory.core.page import GLOBAL_PROJECT, ParsedPage
from ai_memory.core.retention import (
    DECAYING_TIERS, SALIENCE_DEFAULT, PageFacts, apply_feedback, parse_moment,
)
from ai_memory.store.pages import remove_page_rows
from ai_memory.store.writer import WriteTx

TOMBSTONE_FIELDS = "path, project, type, title, tier, content_hash, reason, removed_at, git_commit"


@dataclass(frozen=True)
class Candidate:
    """A page the sweep must judge, with what its tombstone would say."""

    facts: PageFacts
    project: str
    type: str
    title: str
    content_hash: str
    ownership: tuple[str | None, str | None, str | None] = (None, None, None)  # (id, scope, owner), read at planning


def candidates(conn: sqlite3.Connection) -> list[Candidate]:
    """Pages that could go: unpinned, and decaying by tier or carrying an expiry (the rest stay
    whatever their score, so they are not even read)."""
    tiers = sorted(DECAYING_TIERS)
    rows = conn.execute(
        "SELECT p.path, p.project, p.type, p.title, p.tier, p.pinned, p.superseded_by, p.created, p.updated,"
        " p.expires_at, p.mtime_ns, p.content_hash, p.uid, p.scope, p.owner, s.salience, s.access_count,"
        " s.last_access_at"
        " FROM pages p LEFT JOIN page_stats s ON s.path = p.path"
        f" WHERE p.pinned = 0 AND (p.tier IN ({','.join('?' * len(tiers))}) OR p.expires_at IS NOT NULL)"
        " ORDER BY p.path", tiers).fetchall()
    return [_candidate(r) for r in rows]


def _candidate(r: sqlite3.Row) -> Candidate:
    mtime = datetime.fromtimestamp(r["mtime_ns"] / 1e9, tz=timezone.utc) if r["mtime_ns"] else None
    facts = PageFacts(
        path=r["path"], tier=r["tier"], pinned=bool(r["pinned"]), superseded=bool(r["superseded_by"]),
        changed_at=parse_moment(r["updated"]) or parse_moment(r["created"]) or mtime,
        expires_at=parse_moment(r["expires_at"]),
        salience=SALIENCE_DEFAULT if r["salience"] is None else float(r["salience"]),
        access_count=int(r["access_count"] or 0), last_access_at=parse_moment(r["last_access_at"]),
    )
    return Candidate(facts, r["project"], r["type"], r["title"], r["content_hash"], (r["uid"], r["scope"], r["owner"]))


def bury(removed: list[tuple[Candidate, str]], when: str) -> Callable[[WriteTx], None]:
    """A writer job: drop each removed page's index rows and write its tombstone (reason given)."""

    def job(tx: WriteTx) -> None:
        for cand, reason in removed:
            # the plan's copy: the watcher may already have dropped the row of the unlinked file
            owner = _ownership(tx.conn, cand.facts.path) if cand.ownership == (None, None, None) else cand.ownership
            remove_page_rows(tx.conn, cand.facts.path)
            tx.conn.execute(
                f"INSERT OR REPLACE INTO tombstones({TOMBSTONE_FIELDS}, uid, scope, owner)"
                " VALUES (?,?,?,?,?,?,?,?,NULL,?,?,?)",
                (cand.facts.path, cand.project, cand.type, cand.title, cand.facts.tier, cand.content_hash,
                 reason, when, *owner))

    return job


def _ownership(conn: sqlite3.Connection, path: str) -> tuple[str | None, str | None, str | None]:
    """(id, scope, owner) of an indexed page: its tombstone must stay as private as it was."""
    row = conn.execute("SELECT uid, scope, owner FROM pages WHERE path = ?", (path,)).fetchone()
    return (None, None, None) if row is None else (row[0], row[1], row[2])


def bury_pages(pages: list[ParsedPage], reason: str, when: str,
               git_commit: str | None = None) -> Callable[[WriteTx], None]:
    """A writer job for pages whose files went some other way than the sweep (a delete, or a
    deletion that arrived by sync): drop their index rows and leave a tombstone. What it says
    comes from the removed file itself, so it is right even when the index never saw the page."""

    def job(tx: WriteTx) -> None:
        for page in pages:
            remove_page_rows(tx.conn, page.path)
            meta = page.meta
            scope = str(meta.get("scope") or (GLOBAL_PROJECT if page.project == GLOBAL_PROJECT else "project"))
            tx.conn.execute(
                f"INSERT OR REPLACE INTO tombstones({TOMBSTONE_FIELDS}, uid, scope, owner)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (page.path, page.project, page.type, page.title, page.tier, page.content_hash, reason, when,
                 git_commit, _opt(meta.get("id")), scope, _opt(meta.get("owner"))))

    return job


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def record_commit(paths: Iterable[str], oid: str) -> Callable[[WriteTx], None]:
    """A writer job: the git commit that removed these files, for restoring them."""
    rows = [(oid, p) for p in paths]

    def job(tx: WriteTx) -> None:
        tx.conn.executemany("UPDATE tombstones SET git_commit = ? WHERE path = ?", rows)

    return job


def expired_tombstones(conn: sqlite3.Connection, before: str) -> list[str]:
    rows = conn.execute("SELECT path FROM tombstones WHERE removed_at < ? ORDER BY path", (before,)).fetchall()
    return [r[0] for r in rows]


def purge(paths: list[str]) -> Callable[[WriteTx], None]:
    """A writer job: forget tombstones (and the usage of their pages, and the lines prompt recall
    quoted of them) for good; git keeps the files."""

    def job(tx: WriteTx) -> None:
        for path in paths:
            tx.conn.execute("DELETE FROM tombstones WHERE path = ?", (path,))
            if tx.conn.execute("SELECT 1 FROM pages WHERE path = ?", (path,)).fetchone() is None:
                tx.conn.execute("DELETE FROM page_stats WHERE path = ?", (path,))
                tx.conn.execute("DELETE FROM recall_given WHERE path = ?", (path,))

    return job


def list_tombstones(conn: sqlite3.Connection, project: str | None, limit: int) -> list[dict[str, Any]]:
    where, args = ("WHERE project = ?", [project]) if project else ("", [])
    rows = conn.execute(f"SELECT {TOMBSTONE_FIELDS} FROM tombstones {where} ORDER BY removed_at DESC, path"
                        " LIMIT ?", (*args, limit)).fetchall()
    return [dict(r) for r in rows]


def give_feedback(path: str, signal: str, when: str) -> Callable[[WriteTx], dict[str, Any]]:
    """A writer job: move the page's salience by the signal (read and write in one transaction,
    so two concurrent signals both count)."""
    apply_feedback(SALIENCE_DEFAULT, signal)  # an unknown signal fails here, before queueing

    def job(tx: WriteTx) -> dict[str, Any]:
        row = tx.conn.execute("SELECT salience, feedback_count FROM page_stats WHERE path = ?", (path,)).fetchone()
        before = SALIENCE_DEFAULT if row is None else float(row[0])
        after = apply_feedback(before, signal)
        tx.conn.execute(
            "INSERT INTO page_stats(path, salience, feedback_count, last_feedback_at) VALUES (?, ?, 1, ?)"
            " ON CONFLICT(path) DO UPDATE SET salience = excluded.salience,"
            " feedback_count = feedback_count + 1, last_feedback_at = excluded.last_feedback_at",
            (path, after, when))
        count = 1 if row is None else int(row[1]) + 1
        return {"path": path, "signal": signal, "salience_before": before, "salience": after,
                "feedback_count": count}

    return job
