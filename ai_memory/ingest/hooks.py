"""From a raw hook payload to a durable observation: the one path used by /hook and the spool drain."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
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


class RecentProjects:
    """``project_of`` for the working directories seen in the last ``ttl`` seconds, answered
    from memory. An agent sends its session's cwd with every event, and at hundreds of events a
    second the realpath and the walk up to a marker or a ``.git`` took a fifth of the event
    loop's time. A ``git init`` or a marker added later names that directory's events once the
    answer is ``ttl`` old. Used on the event loop's thread only."""

    def __init__(self, ttl: float = 5.0, size: int = 1024,
                 resolve: Callable[[str], str] = project_of, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl, self._size, self._resolve, self._clock = ttl, size, resolve, clock
        self._answers: OrderedDict[str, tuple[float, str]] = OrderedDict()

    def name_of(self, cwd: str) -> str:
        now = self._clock()
        known = self._answers.get(cwd)
        if known is not None and now - known[0] < self._ttl:
            self._answers.move_to_end(cwd)
            return known[1]
        name = self._resolve(cwd)
        self._answers[cwd] = (now, name)
        self._answers.move_to_end(cwd)
        if len(self._answers) > self._size:
            self._answers.popitem(last=False)
        return name


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
    projects_here: Callable[[str], str] = project_of,
    quota: StorageQuota | None = None,
) -> InsertResult:
    """Sanitize one payload and return once it is durably committed.

    ``wait_for_room`` is for internal callers (the spool drain) that may wait for the queue;
    hooks get Overloaded (429) instead, so the agent is never held up. ``paths_here``: whether
    the payload's cwd is on this machine (else a project is named from it as text alone), and
    ``projects_here`` then names its project (``RecentProjects.name_of`` for a busy caller). With
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
        project_resolver=projects_here if paths_here else project_named,
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
