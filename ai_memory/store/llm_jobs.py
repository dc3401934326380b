"""Rows of the LLM consolidation queue (``llm_jobs``): enqueue, lease, finish, retry, count.

One row per session. A lease is a conditional update (``WHERE lease_token = ?``), so a worker
whose lease was taken back after a crash cannot finish the job a second time. Timestamps are
UTC ISO strings with microseconds, which sort as they compare.
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
    attempts: int  # counting this one
    token: str
    proposal: str | None  # the validated answer of an earlier attempt, applied again as it was


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def enqueue(conn: sqlite3.Connection, session_id: str, page_path: str, page_text: str, now: str) -> None:
    """Queue (or queue again, after a recompile) the session's job; runs inside the session
    end's own transaction. A running job loses its lease: its finish will not match, and the
    page it would rewrite is the one just compiled."""
    conn.execute(
        "INSERT INTO llm_jobs(session_id, page_path, page_sha256, state, not_before, created_at, updated_at)"
        " VALUES (?, ?, ?, 'pending', ?, ?, ?)"
        " ON CONFLICT(session_id) DO UPDATE SET page_path = excluded.page_path,"
        " page_sha256 = excluded.page_sha256, written_sha256 = NULL, proposal = NULL, state = 'pending', attempts = 0,"
        " not_before = excluded.not_before, lease_token = NULL, lease_until = NULL, last_error = NULL,"
        " updated_at = excluded.updated_at",
        (session_id, page_path, sha256_text(page_text), now, now, now),
    )


def lease_next(conn: sqlite3.Connection, now: str, lease_until: str, max_attempts: int) -> LeasedJob | None:
    """Take the next due job: a pending one whose time has come, or a running one whose lease
    ran out (its worker crashed). A job out of attempts is marked failed instead."""
    conn.execute(
        "UPDATE llm_jobs SET state = 'failed', lease_token = NULL, updated_at = ?,"
        " last_error = coalesce(last_error, 'the worker stopped during its last attempt')"
        " WHERE state = 'running' AND lease_until < ? AND attempts >= ?", (now, now, max_attempts))
    row = conn.execute(
        "SELECT * FROM llm_jobs WHERE (state = 'pending' AND not_before <= ?)"
        " OR (state = 'running' AND lease_until < ?) ORDER BY not_before, id LIMIT 1", (now, now)).fetchone()
    if row is None:
        return None
    token = secrets.token_hex(8)
    conn.execute("UPDATE llm_jobs SET state = 'running', attempts = attempts + 1, lease_token = ?,"
                 " lease_until = ?, updated_at = ? WHERE id = ?", (token, lease_until, now, row["id"]))
    return LeasedJob(row["id"], row["session_id"], row["page_path"], row["page_sha256"], row["written_sha256"],
                     int(row["attempts"]) + 1, token, row["proposal"])


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
    counts = {state: 0 for state in ("pending", "running", "done", "failed")}
    for state, n in conn.execute("SELECT state, count(*) FROM llm_jobs GROUP BY state"):
        counts[state] = int(n)
    last = conn.execute("SELECT session_id, last_error FROM llm_jobs WHERE last_error IS NOT NULL"
                        " ORDER BY updated_at DESC LIMIT 1").fetchone()
    counts["last_error"] = f"{last[0]}: {last[1]}" if last else None
    return counts


def job_row(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM llm_jobs WHERE session_id = ?", (session_id,)).fetchone()
    return dict(row) if row else None
