"""Rows of the LLM consolidation queue (``llm_jobs``): enqueue, lease, finish, retry, count;
and the model calls made (``model_calls`` per session, ``llm_usage`` per UTC day) under their caps.

One row per session. A lease is a conditional update (``WHERE lease_token = ?``), so a worker
whose lease was taken back after a crash cannot finish the job a second time. ``attempts``
counts every lease the job ever had and is never reset; the retry budget of ``max_attempts``
counts from ``queued_attempts``, the attempts made before the job was last queued. Timestamps
are UTC ISO strings with microseconds, which sort as they compare.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LeasedJob:
    id: int
    session_id: str
    page_path: str
    page_sha256: str
    written_sha256: str | None
    attempts: int  # every lease the job ever had, this one counted
    token: str
    proposal: str | None  # the validated answer of an earlier attempt, applied again as it was
    tries: int = 1  # attempts since the job was last queued, this one counted: the retry budget's count


STATES = ("pending", "running", "done", "failed", "capped")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def enqueue(conn: sqlite3.Connection, session_id: str, page_path: str, page_text: str, now: str) -> bool:
    """Queue the session's job (or queue it again, after a compile that gave other bytes); runs
    inside the session end's own transaction. False when the job already holds these bytes, in
    whatever state (queued, running, done, failed, capped): the same page is never sent to the
    model twice. A running job loses its lease: its finish will not match, and the page it would
    rewrite is the one just compiled. Attempts and model calls are kept (never reset)."""
    cur = conn.execute(
        "INSERT INTO llm_jobs(session_id, page_path, page_sha256, state, not_before, created_at, updated_at)"
        " VALUES (?, ?, ?, 'pending', ?, ?, ?)"
        " ON CONFLICT(session_id) DO UPDATE SET page_path = excluded.page_path,"
        " page_sha256 = excluded.page_sha256, written_sha256 = NULL, proposal = NULL, state = 'pending',"
        " queued_attempts = attempts, not_before = excluded.not_before, lease_token = NULL, lease_until = NULL,"
        " last_error = NULL, updated_at = excluded.updated_at"
        " WHERE llm_jobs.page_sha256 != excluded.page_sha256",
        (session_id, page_path, sha256_text(page_text), now, now, now),
    )
    return cur.rowcount == 1


def standing_rewrite(conn: sqlite3.Connection, session_id: str, page_text: str) -> str | None:
    """The SHA-256 of the bytes the model's job wrote over the session page compiled as
    ``page_text`` (None: no job for these bytes, or nothing written yet)."""
    row = conn.execute("SELECT written_sha256 FROM llm_jobs WHERE session_id = ? AND page_sha256 = ?",
                       (session_id, sha256_text(page_text))).fetchone()
    return row[0] if row else None


def lease_next(conn: sqlite3.Connection, now: str, lease_until: str, max_attempts: int) -> LeasedJob | None:
    """Take the next due job: a pending one whose time has come, or a running one whose lease
    ran out (its worker crashed). A job out of attempts is marked failed instead."""
    conn.execute(
        "UPDATE llm_jobs SET state = 'failed', lease_token = NULL, updated_at = ?,"
        " last_error = coalesce(last_error, 'the worker stopped during its last attempt')"
        " WHERE state = 'running' AND lease_until < ? AND attempts - queued_attempts >= ?", (now, now, max_attempts))
    row = conn.execute(
        "SELECT * FROM llm_jobs WHERE (state = 'pending' AND not_before <= ?)"
        " OR (state = 'running' AND lease_until < ?) ORDER BY not_before, id LIMIT 1", (now, now)).fetchone()
    if row is None:
        return None
    token = secrets.token_hex(8)
    conn.execute("UPDATE llm_jobs SET state = 'running', attempts = attempts + 1, lease_token = ?,"
                 " lease_until = ?, updated_at = ? WHERE id = ?", (token, lease_until, now, row["id"]))
    return LeasedJob(row["id"], row["session_id"], row["page_path"], row["page_sha256"], row["written_sha256"],
                     int(row["attempts"]) + 1, token, row["proposal"],
                     int(row["attempts"]) + 1 - int(row["queued_attempts"]))


def reserve_call(conn: sqlite3.Connection, job: LeasedJob, day: str, per_session: int, per_day: int) -> str | None:
    """Count one model call for the job's session and for the UTC ``day``, if both caps allow it
    (a cap of 0 allows any number). None when counted; else what refused: ``"session"``,
    ``"day"``, or ``"lease"`` when the job was queued again meanwhile."""
    row = conn.execute("SELECT model_calls FROM llm_jobs WHERE id = ? AND lease_token = ?",
                       (job.id, job.token)).fetchone()
    if row is None:
        return "lease"
    if per_session > 0 and int(row[0]) >= per_session:
        return "session"
    if per_day > 0 and calls_on(conn, day) >= per_day:
        return "day"
    conn.execute("UPDATE llm_jobs SET model_calls = model_calls + 1 WHERE id = ?", (job.id,))
    conn.execute("INSERT INTO llm_usage(day, calls) VALUES (?, 1) ON CONFLICT(day) DO UPDATE SET calls = calls + 1",
                 (day,))
    return None


def calls_on(conn: sqlite3.Connection, day: str) -> int:
    row = conn.execute("SELECT calls FROM llm_usage WHERE day = ?", (day,)).fetchone()
    return int(row[0]) if row else 0


def cap_reached(conn: sqlite3.Connection, job: LeasedJob, reason: str, now: str) -> bool:
    """The session's cap refused the call: the job ends ``capped`` with the reason (no retry;
    a compile that changes the page queues it again, and the cap refuses again)."""
    cur = conn.execute(
        "UPDATE llm_jobs SET state = 'capped', lease_token = NULL, lease_until = NULL, last_error = ?,"
        " updated_at = ? WHERE id = ? AND lease_token = ?", (reason, now, job.id, job.token))
    return cur.rowcount == 1


def defer(conn: sqlite3.Connection, job: LeasedJob, not_before: str, reason: str, now: str) -> bool:
    """The day's cap refused the call: the job waits for ``not_before`` (the next UTC day) with
    the reason; the lease that asked nothing is not an attempt."""
    cur = conn.execute(
        "UPDATE llm_jobs SET state = 'pending', attempts = attempts - 1, not_before = ?, lease_token = NULL,"
        " lease_until = NULL, last_error = ?, updated_at = ? WHERE id = ? AND lease_token = ?",
        (not_before, reason, now, job.id, job.token))
    return cur.rowcount == 1


def save_proposal(conn: sqlite3.Connection, job: LeasedJob, proposal: str) -> bool:
    """Keep the model's validated answer before anything is written from it: a retry after a
    crash applies this same answer (same idempotency keys) instead of asking again."""
    cur = conn.execute("UPDATE llm_jobs SET proposal = ? WHERE id = ? AND lease_token = ?",
                       (proposal, job.id, job.token))
    return cur.rowcount == 1


def note_written(conn: sqlite3.Connection, job: LeasedJob, page_text: str) -> bool:
    """Remember the bytes the job is about to put in the session page (a retry may replace its
    own rewrite); False when the lease was lost: the session was compiled again meanwhile."""
    cur = conn.execute("UPDATE llm_jobs SET written_sha256 = ? WHERE id = ? AND lease_token = ?",
                       (sha256_text(page_text), job.id, job.token))
    return cur.rowcount == 1


def finish(conn: sqlite3.Connection, job: LeasedJob, outcome: dict[str, Any], now: str) -> bool:
    """Mark the job done with what it did; False when its lease was lost meanwhile."""
    cur = conn.execute(
        "UPDATE llm_jobs SET state = 'done', lease_token = NULL, lease_until = NULL, last_error = NULL,"
        " outcome = ?, updated_at = ? WHERE id = ? AND lease_token = ?",
        (json.dumps(outcome, sort_keys=True), now, job.id, job.token))
    return cur.rowcount == 1


def retry_or_fail(conn: sqlite3.Connection, job: LeasedJob, error: str, not_before: str | None, now: str) -> str:
    """After a failed attempt: pending again from ``not_before``, or failed (None: no attempts left)."""
    state = "pending" if not_before is not None else "failed"
    conn.execute(
        "UPDATE llm_jobs SET state = ?, not_before = coalesce(?, not_before), lease_token = NULL,"
        " lease_until = NULL, last_error = ?, updated_at = ? WHERE id = ? AND lease_token = ?",
        (state, not_before, error[:500], now, job.id, job.token))
    return state


def next_due(conn: sqlite3.Connection) -> str | None:
    """When the worker has something to do next: the earliest pending time or lease end."""
    row = conn.execute(
        "SELECT min(CASE state WHEN 'pending' THEN not_before ELSE lease_until END)"
        " FROM llm_jobs WHERE state IN ('pending', 'running')").fetchone()
    return row[0] if row else None


def queue_counts(conn: sqlite3.Connection) -> dict[str, Any]:
    """What ``status`` shows: jobs by state and the last error of a failed or waiting one."""
    counts: dict[str, Any] = {state: 0 for state in STATES}
    for state, n in conn.execute("SELECT state, count(*) FROM llm_jobs GROUP BY state"):
        counts[state] = int(n)
    last = conn.execute("SELECT session_id, last_error FROM llm_jobs WHERE last_error IS NOT NULL"
                        " ORDER BY updated_at DESC LIMIT 1").fetchone()
    counts["last_error"] = f"{last[0]}: {last[1]}" if last else None
    return counts


def job_row(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM llm_jobs WHERE session_id = ?", (session_id,)).fetchone()
    return dict(row) if row else None
