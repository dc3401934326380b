"""Observations and sessions in SQLite: the insert job (for the writer) and the read queries."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from ai_memory.core.events import EventKind
from ai_memory.core.observation import Observation
from ai_memory.store.connection import inserted_rowid
from ai_memory.store.fts_rows import index_observation, observation_terms
from ai_memory.store.projects import project_for
from ai_memory.store.writer import WriteTx


@dataclass(frozen=True)
class InsertResult:
    id: str
    duplicate: bool
    session_id: str = ""
    event: str = ""


@dataclass(frozen=True)
class ObservationJob:
    """A writer job storing one observation (with its FTS row and idempotency key) exactly once.
    ``size`` is what it stores, in bytes: its title, body and payload as UTF-8 (what a user's
    daily quota counts; ``stored_bytes_since`` sums the same from the rows)."""

    obs: Observation
    record: dict[str, Any]  # without its payload
    payload_json: str
    line: bytes  # the journal line
    size: int

    def __call__(self, tx: WriteTx) -> InsertResult:
        obs = self.obs
        duplicate = store_record(tx.conn, self.record, self.payload_json)
        if duplicate is not None:
            return InsertResult(id=duplicate, duplicate=True, session_id=obs.session_id, event=obs.event.value)
        tx.journal(self.line)
        return InsertResult(id=obs.id, duplicate=False, session_id=obs.session_id, event=obs.event.value)


def insert_observation(obs: Observation) -> ObservationJob:
    """The writer job storing ``obs``."""
    record = obs.to_record()
    payload_json = json.dumps(record.pop("payload"), ensure_ascii=False)
    # The journal line is built around the payload serialized once (it is most of the bytes).
    head = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    line = f'{head[:-1]},"payload":{payload_json}}}\n'.encode()
    size = len(obs.title.text.encode()) + len(obs.body.text.encode()) + len(payload_json.encode())
    return ObservationJob(obs, record, payload_json, line, size)


def stored_bytes_since(conn: sqlite3.Connection, since: str) -> dict[str, int]:
    """Bytes stored per owner by the events received since ``since`` (title, body and payload as
    UTF-8, as ``ObservationJob.size`` counts them). Rowids follow arrival (one writer hands them
    out in order; a rebuild replays the journal in order), so the first row received since is
    found by a binary search on rowid and only the rows from there on are read."""
    first = _first_rowid_since(conn, since)
    if first is None:
        return {}
    rows = conn.execute(
        "SELECT owner, SUM(length(CAST(title AS BLOB)) + length(CAST(body AS BLOB)) + length(CAST(payload AS BLOB)))"
        " FROM observations WHERE rowid >= ? AND received_at >= ? GROUP BY owner", (first, since))
    return {str(owner): int(n or 0) for owner, n in rows}


def _first_rowid_since(conn: sqlite3.Connection, since: str) -> int | None:
    first, last = conn.execute("SELECT MIN(rowid), MAX(rowid) FROM observations").fetchone()
    if last is None:
        return None
    low, high = int(first), int(last)
    high += 1  # the search's answer lies in [low, high]; high: no row received since
    while low < high:
        mid = (low + high) // 2
        row = conn.execute("SELECT rowid, received_at FROM observations WHERE rowid >= ? ORDER BY rowid LIMIT 1",
                           (mid,)).fetchone()
        if row is None or row[1] >= since:
            high = mid
        else:
            low = int(row[0]) + 1
    return low


@dataclass(frozen=True)
class PreparedRecord:
    """A journal record decoded, with what storing it computes from it alone: its payload as
    JSON and its title and body analysed. Picklable, so a rebuild prepares records in a helper
    process while it stores the ones before."""

    record: dict[str, Any]  # without its payload
    payload_json: str
    terms: tuple[str, str]


def text_problem(record: dict[str, Any]) -> str:
    """Why a journal record's title and body cannot be stored ('' when they can): each must be
    there and be text. A journal line may come from a hand edit or from someone else's archive,
    and one bad line must cost only itself, never the rebuild that reads it."""
    for key in ("title", "body"):
        if key not in record:
            return f"no {key!r} in the record"
        if not isinstance(record[key], str):
            return f"its {key} is {type(record[key]).__name__}, not text"
    return ""


def prepared_record(record: dict[str, Any]) -> PreparedRecord:
    """For a record ``text_problem`` passes (another raises KeyError or TypeError)."""
    rest = {k: v for k, v in record.items() if k != "payload"}
    return PreparedRecord(rest, json.dumps(record.get("payload"), ensure_ascii=False),
                          observation_terms(record["title"], record["body"]))


def scoped_key(key: str | None, owner: str | None) -> str | None:
    """An event's idempotency key within its owner's: bob's key K says nothing about alice's
    events. The admin's (``local``) keys stay bare, as every key was before users existed; the
    separator is a character no key and no user name may hold."""
    if not key:
        return None
    return key if (owner or "local") == "local" else f"{owner}\x1f{key}"


def store_record(conn: sqlite3.Connection, r: dict[str, Any], payload_json: str | None = None,
                 terms: tuple[str, str] | None = None) -> str | None:
    """Insert one journal record; return the original id instead when it is a duplicate.
    ``payload_json`` and ``terms`` (its title and body analysed), when given, are those of the
    record, worked out beforehand (``prepared_record``).

    Used by the live path and by reindex alike, so a rebuilt database equals the live one.
    """
    key = scoped_key(r.get("idempotency_key"), r.get("owner"))
    if key:
        row = conn.execute("SELECT observation_id FROM idempotency_keys WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return str(row[0])
    if conn.execute("SELECT 1 FROM observations WHERE id = ?", (r["id"],)).fetchone():
        return str(r["id"])  # this id is stored already (a journal replayed twice)
    project = project_for(conn, r.get("project"), r["session_id"])  # a renamed project, a moved session
    if project != r.get("project"):
        r = {**r, "project": project}
    _upsert_session(conn, r)
    cur = conn.execute(
        "INSERT INTO observations(id, session_id, agent, event, source_event, project, cwd,"
        " tool_name, prompt_id, occurred_at, received_at, title, body, payload, redactions, owner)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            r["id"], r["session_id"], r["agent"], r["event"], r.get("source_event"),
            r.get("project"), r.get("cwd"), r.get("tool_name"), r.get("prompt_id"),
            r["occurred_at"], r["received_at"], r["title"], r["body"],
            payload_json if payload_json is not None else json.dumps(r.get("payload"), ensure_ascii=False),
            ",".join(r.get("redactions") or ()), r.get("owner") or "local",
        ),
    )
    if r.get("searchable", True):
        index_observation(conn, inserted_rowid(cur), r["title"], r["body"], r.get("project"), terms)
    else:  # kept for the record only: no FTS row, and nothing for the embedding job to do
        conn.execute("UPDATE observations SET embed_hash = '', sentences_done = 1 WHERE rowid = ?", (cur.lastrowid,))
    if key:
        conn.execute(
            "INSERT INTO idempotency_keys(key, observation_id, created_at) VALUES (?, ?, ?)",
            (key, r["id"], r["received_at"]),
        )
    return None


def _upsert_session(conn: sqlite3.Connection, r: dict[str, Any]) -> None:
    ended = r["occurred_at"] if r["event"] == EventKind.SESSION_END.value else None
    conn.execute(
        "INSERT INTO sessions(id, agent, project, cwd, host, started_at, last_event_at, ended_at,"
        " observation_count) VALUES (?,?,?,?,?,?,?,?,1)"
        " ON CONFLICT(id) DO UPDATE SET"
        " observation_count = observation_count + 1,"
        " started_at = MIN(started_at, excluded.started_at),"
        " last_event_at = MAX(last_event_at, excluded.last_event_at),"
        " ended_at = COALESCE(excluded.ended_at, ended_at),"
        " project = COALESCE(project, excluded.project),"
        " cwd = COALESCE(cwd, excluded.cwd),"
        " host = COALESCE(host, excluded.host)",
        (
            r["session_id"], r["agent"], r.get("project"), r.get("cwd"), r.get("host"),
            r["occurred_at"], r["occurred_at"], ended,
        ),
    )


def session_observations(conn: sqlite3.Connection, session_id: str, limit: int = 10000) -> list[dict[str, Any]]:
    """A session's observations in the order they happened."""
    rows = conn.execute(
        "SELECT id, session_id, agent, event, source_event, project, cwd, tool_name, prompt_id,"
        " occurred_at, received_at, title, body, payload, redactions, owner FROM observations"
        " WHERE session_id = ? ORDER BY occurred_at, rowid LIMIT ?",
        (session_id, limit),
    ).fetchall()
    out = []
    for row in rows:
        item = dict(row)
        item["payload"] = json.loads(item["payload"])
        item["redactions"] = [x for x in item["redactions"].split(",") if x]
        out.append(item)
    return out


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    observations = conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0]
    return {"sessions": int(sessions), "observations": int(observations)}


def agents_last_seen(conn: sqlite3.Connection) -> dict[str, str]:
    """The time of the last event from each agent."""
    rows = conn.execute("SELECT agent, MAX(last_event_at) FROM sessions GROUP BY agent").fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def session_exists(conn: sqlite3.Connection, session_id: str) -> bool:
    return conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


def session_page_path(conn: sqlite3.Connection, session_id: str) -> str | None:
    row = conn.execute("SELECT page_path FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return row[0] if row else None


def mark_compiled(conn: sqlite3.Connection, session_id: str, compiled_at: str, page_path: str | None = None) -> None:
    """The session was compiled up to ``compiled_at`` (into ``page_path``, when worth a page)."""
    if page_path is None:
        conn.execute("UPDATE sessions SET compiled_at = ? WHERE id = ?", (compiled_at, session_id))
    else:
        conn.execute("UPDATE sessions SET page_path = ?, compiled_at = ? WHERE id = ?",
                     (page_path, compiled_at, session_id))


def sessions_to_compile(conn: sqlite3.Connection, cutoff: str, limit: int = 100) -> list[str]:
    """Sessions that stopped before ``cutoff`` and changed since their last compile, oldest first."""
    return [r[0] for r in conn.execute(
        "SELECT s.id FROM sessions s WHERE s.last_event_at < ?"
        " AND (s.compiled_at IS NULL OR s.compiled_at < s.last_event_at)"
        " AND EXISTS (SELECT 1 FROM observations o WHERE o.session_id = s.id"
        "             AND o.event IN ('stop', 'session-end'))"
        " ORDER BY s.last_event_at LIMIT ?", (cutoff, limit))]


def newest_observation_rowid(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT MAX(rowid) FROM observations").fetchone()[0] or 0)


def observation_ids(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT id FROM observations")}


def link_session_pages(conn: sqlite3.Connection) -> None:
    """Every session linked to its page (the Session Summary naming it), and compiled up to its
    last event when it has one: what a rebuild makes of sessions whose pages it indexed."""
    conn.execute(
        "UPDATE sessions SET page_path = (SELECT p.path FROM pages p WHERE p.session_id = sessions.id"
        " AND p.type = 'Session Summary' LIMIT 1)")
    conn.execute("UPDATE sessions SET compiled_at = last_event_at WHERE page_path IS NOT NULL")
