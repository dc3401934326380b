"""The offline outbox: writes made while the server is unreachable, kept until it has them.

``<data_dir>/client/outbox.sqlite`` holds one row per write (a structured memory or correction,
a manual handoff, a message) with a local id (``local-<ulid>``), its request body, and its fate:

    pending   queued, not on the server yet (searchable locally at once)
    synced    the server stored it; ``server_id``/``server_path`` are the record's adopted identity
    duplicate the server already held the same memory (409); ``server_id`` is the match's id
    failed    the server refused it (4xx); kept with the reason, never retried by itself

Unlike the cache, the outbox is not derived: until synced it is the only copy, so rows are never
pruned. Several processes (CLI, MCP servers, hooks) share the file: WAL plus a busy timeout for
writes, and an ``flock`` (``outbox.lock``) so that only one of them flushes at a time.
"""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ai_memory.client.state_files import state_db, try_lock
from ai_memory.core.ids import new_id

LOCAL_PREFIX = "local-"
STATES = ("pending", "synced", "duplicate", "failed")
KINDS = {"memory": "/v1/pages", "handoff": "/v1/handoffs", "message": "/v1/messages"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox(
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    local_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    project TEXT,
    title TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'pending',
    server_id TEXT,
    server_path TEXT,
    reason TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS outbox_fts USING fts5(local_id UNINDEXED, title, text);
"""


def is_local_id(ref: object) -> bool:
    return isinstance(ref, str) and ref.startswith(LOCAL_PREFIX)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Entry:
    seq: int
    local_id: str
    kind: str
    body: dict[str, Any]
    project: str | None
    title: str
    text: str
    state: str
    server_id: str | None
    server_path: str | None
    reason: str | None
    attempts: int
    created_at: str
    updated_at: str

    @property
    def id(self) -> str:
        """The id callers should use now: the server's once adopted, else the local one."""
        return self.server_id or self.local_id

    def as_json(self) -> dict[str, Any]:
        return {"local_id": self.local_id, "id": self.id, "kind": self.kind, "state": self.state,
                "project": self.project, "title": self.title, "server_id": self.server_id,
                "server_path": self.server_path, "reason": self.reason, "attempts": self.attempts,
                "created_at": self.created_at, "updated_at": self.updated_at, "body": self.body}


class Outbox:
    """The queue of writes waiting for the server, in the order they were made."""

    def __init__(self, state_dir: Path) -> None:
        self.dir = state_dir
        self.path = state_dir / "outbox.sqlite"

    def _conn(self) -> AbstractContextManager[sqlite3.Connection]:
        return state_db(self.path, _SCHEMA, "FULL")  # the only copy of a pending write: durable first

    @staticmethod
    def new_local_id() -> str:
        return LOCAL_PREFIX + new_id()

    def add(self, kind: str, body: dict[str, Any], *, local_id: str, project: str | None, title: str,
            text: str, attempted: bool = False) -> Entry:
        """Queue one write (durably) under ``local_id``; it becomes searchable in the same transaction."""
        if kind not in KINDS:
            raise ValueError(f"unknown outbox kind {kind!r}")
        now = _now()
        with self._conn() as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO outbox(local_id, kind, body, project, title, text, attempts, created_at,"
                         " updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                         (local_id, kind, json.dumps(body), project, title, text, int(attempted), now, now))
            conn.execute("INSERT INTO outbox_fts(local_id, title, text) VALUES (?,?,?)", (local_id, title, text))
            conn.execute("COMMIT")
        return self.get(local_id)  # type: ignore[return-value]

    def get(self, ref: str) -> Entry | None:
        """An entry by its local id or by the server id it adopted."""
        if not self.path.exists():
            return None
        with self._conn() as conn:
            row = conn.execute("SELECT * FROM outbox WHERE local_id = ? OR server_id = ? ORDER BY seq LIMIT 1",
                               (ref, ref)).fetchone()
        return None if row is None else _entry(row)

    def entries(self, state: str | None = None) -> list[Entry]:
        if not self.path.exists():
            return []
        sql = "SELECT * FROM outbox"
        args: tuple[str, ...] = ()
        if state:
            sql, args = sql + " WHERE state = ?", (state,)
        with self._conn() as conn:
            return [_entry(r) for r in conn.execute(sql + " ORDER BY seq", args)]

    def pending_count(self) -> int:
        if not self.path.exists():  # most runs never queue anything: no file, no cost
            return 0
        with self._conn() as conn:
            return int(conn.execute("SELECT count(*) FROM outbox WHERE state = 'pending'").fetchone()[0])

    def mark(self, local_id: str, state: str, *, server_id: str | None = None, server_path: str | None = None,
             reason: str | None = None, body: dict[str, Any] | None = None) -> None:
        with self._conn() as conn:
            conn.execute("UPDATE outbox SET state = ?, server_id = coalesce(?, server_id),"
                         " server_path = coalesce(?, server_path), reason = ?, body = coalesce(?, body),"
                         " updated_at = ? WHERE local_id = ?",
                         (state, server_id, server_path, reason, json.dumps(body) if body else None, _now(),
                          local_id))

    def count_attempt(self, local_id: str, reason: str | None = None) -> None:
        """Recorded before each send: a later flush then knows the first may have landed."""
        with self._conn() as conn:
            conn.execute("UPDATE outbox SET attempts = attempts + 1, reason = coalesce(?, reason), updated_at = ?"
                         " WHERE local_id = ?", (reason, _now(), local_id))

    def search(self, expr: str, projects: set[str] | None, limit: int) -> list[tuple[Entry, float]]:
        """Entries (not failed) matching an FTS5 expression, best first, with their bm25 rank."""
        if not self.path.exists():
            return []
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT o.*, bm25(outbox_fts) AS rank FROM outbox_fts JOIN outbox o USING (local_id)"
                " WHERE outbox_fts MATCH ? AND o.state != 'failed' ORDER BY rank LIMIT ?",
                (expr, limit * 4)).fetchall()
        found = [(_entry(r), float(r["rank"])) for r in rows]
        return [(e, rank) for e, rank in found if projects is None or e.project in projects][:limit]

    def superseded_refs(self) -> set[str]:
        """Ids and paths that a queued or sent correction replaces: local search leaves them out."""
        if not self.path.exists():
            return set()
        with self._conn() as conn:
            rows = conn.execute("SELECT json_extract(body, '$.supersedes') FROM outbox WHERE state != 'failed'"
                                " AND json_extract(body, '$.supersedes') IS NOT NULL").fetchall()
            refs = {str(r[0]) for r in rows}
            adopted = conn.execute("SELECT server_id, server_path FROM outbox WHERE local_id IN (%s)"
                                   % ",".join("?" * len(refs)), tuple(refs)).fetchall() if refs else []
        return refs | {str(v) for row in adopted for v in row if v}

    def flushing(self) -> AbstractContextManager[bool]:
        """Yields True for the one process that may flush now, False to everyone else."""
        return try_lock(self.dir / "outbox.lock")

def _entry(row: sqlite3.Row) -> Entry:
    return Entry(seq=row["seq"], local_id=row["local_id"], kind=row["kind"], body=json.loads(row["body"]),
                 project=row["project"], title=row["title"], text=row["text"], state=row["state"],
                 server_id=row["server_id"], server_path=row["server_path"], reason=row["reason"],
                 attempts=row["attempts"], created_at=row["created_at"], updated_at=row["updated_at"])


def first_sentence(text: str, limit: int = 80) -> str:
    """A title when the caller gave none (what the server does too, roughly)."""
    head = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return head if len(head) <= limit else head[: limit - 1] + "…"
