"""From a raw hook payload to a durable observation: the one path used by /hook and the spool drain."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import Any

from ai_memory.client.project import normalize_name, resolve_project
from ai_memory.ingest.quota import StorageQuota
from ai_memory.core.observation import build_observation
from ai_memory.store.observations import InsertResult, insert_observation
from ai_memory.store.writer import Writer


def project_of(cwd: str) -> str:
    """The project name for a working directory, read afresh each time: a ``git init`` or a
    marker file added later names the directory's next events (a few stats and one small read)."""
    return resolve_project(cwd).name


def project_named(cwd: str) -> str:
    """The project a path from another machine names, read as text alone (its last segment):
    nothing on this disk is looked at. Such a client sends the project it resolved itself."""
    return normalize_name(PurePosixPath(cwd.replace("\\", "/").rstrip("/")).name)


def project_for(cwd: str, paths_here: bool) -> str:
    return project_of(cwd) if paths_here else project_named(cwd)


async def ingest_event(
    writer: Writer,
    payload: Any,
    *,
    agent: str,
    event: str | None = None,
    idempotency_key: str | None = None,
    host: str | None = None,
    client_os: str | None = None,
    captured_at: Any = None,
    wait_for_room: bool = False,
    owner: str = "local",
    paths_here: bool = True,
    quota: StorageQuota | None = None,
) -> InsertResult:
    """Sanitize one payload and return once it is durably committed.

    ``wait_for_room`` is for internal callers (the spool drain) that may wait for the queue;
    hooks get Overloaded (429) instead, so the agent is never held up. ``paths_here``: whether
    the payload's cwd is on this machine (else a project is named from it as text alone). With
    ``quota``, the event's bytes are counted against its owner's day first (QuotaExceeded, 429,
    past it) and given back when nothing was stored (a duplicate, a refused write).
    """
    if quota is not None:
        quota.check(owner)
    if isinstance(payload, dict) and client_os and "os" not in payload:
        payload = {**payload, "os": str(client_os)[:64]}
    obs = build_observation(
        payload, agent=agent, event_hint=event, received_at=datetime.now(timezone.utc),
        idempotency_key=idempotency_key, host=host, captured_at=captured_at,
        project_resolver=project_of if paths_here else project_named,
        owner=owner,
    )
    job = insert_observation(obs)
    if quota is None:
        return await (writer.submit_wait(job) if wait_for_room else writer.submit(job))
    quota.charge(owner, job.size)
    try:
        result = await (writer.submit_wait(job) if wait_for_room else writer.submit(job))
    except Exception:  # refused (a full queue, a failed write): nothing stored; a cancelled wait may still commit
        quota.refund(owner, job.size)
        raise
    if result.duplicate:
        quota.refund(owner, job.size)
    return result
