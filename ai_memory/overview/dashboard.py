"""What the status page shows beside ``status``: the data dir's size on disk by part, the wiki's
last commit, the last sync, and how recently each agent's hooks were heard from.

An agent is judged by its last event only: the daemon cannot see an agent's settings file (that
is ``ai-memory doctor``'s live check), but an agent whose hooks stopped sending is silent here.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ai_memory.core.clock import parse_utc
from ai_memory.core.users import ADMIN
from ai_memory.wiki.git import last_commit
from ai_memory.wiki.sync import Syncer

# The data dir's parts as a person names them, and their folders.
PARTS = (("database", "db"), ("wiki", "wiki"), ("journal", "raw"), ("spool", "spool"), ("backups", "backups"),
         ("logs", "logs"))
ACTIVE_S = 24 * 3600.0  # an agent heard from within a day: its hooks work
QUIET_S = 7 * 24 * 3600.0  # within a week: quiet; after that: silent, worth a doctor run


def _folder_bytes(top: Path) -> int:
    """The bytes of the files under ``top``, links not followed (one never leads out of the data dir)."""
    total, stack = 0, [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
        except OSError:  # gone meanwhile, or unreadable: counted as empty
            continue
    return total


def disk_usage(data_dir: Path) -> dict[str, int]:
    """Bytes on disk of each part of the data dir (``PARTS``), and their ``total``."""
    sizes = {name: _folder_bytes(data_dir / folder) for name, folder in PARTS}
    return {**sizes, "total": sum(sizes.values())}


class DiskUsage:
    """``disk_usage`` measured at most once a minute: the walk reads every file's size (hundreds
    of thousands at 100,000 pages), and an open status page refreshes every few seconds."""

    MAX_AGE_S = 60.0

    def __init__(self, data_dir: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.data_dir = data_dir
        self._clock = clock
        self._measured: tuple[float, dict[str, int]] | None = None

    async def sizes(self) -> dict[str, int]:
        now = self._clock()
        if self._measured is None or now - self._measured[0] > self.MAX_AGE_S:
            self._measured = (now, await asyncio.to_thread(disk_usage, self.data_dir))
        return self._measured[1]


def agent_state(last_event: str | None, now: datetime) -> str:
    """active, quiet or silent, by the age of the agent's last event."""
    try:
        age = (now - parse_utc(last_event or "")).total_seconds()
    except ValueError:
        return "silent"
    return "active" if age <= ACTIVE_S else "quiet" if age <= QUIET_S else "silent"


def sync_state(syncer: Syncer) -> dict[str, Any]:
    """Whether a remote is set (never its URL, which may hold a password) and the last sync's end."""
    return {"configured": bool(syncer.remote), "last": syncer.last}


async def dashboard(disk_usage: DiskUsage, wiki_dir: Path, syncer: Syncer, agents: dict[str, str],
                    owner: str) -> dict[str, Any]:
    """{disk, last_commit, sync, agents: [{agent, last_event, state}]}, newest agent first. The
    last commit's subject names the page it wrote, perhaps someone's private one: the admin's alone."""
    disk, commit = await asyncio.gather(disk_usage.sizes(), asyncio.to_thread(last_commit, wiki_dir))
    if commit is not None and owner != ADMIN:
        commit = {**commit, "subject": ""}
    now = datetime.now(timezone.utc)
    heard = [{"agent": name, "last_event": at, "state": agent_state(at, now)}
             for name, at in sorted(agents.items(), key=lambda item: item[1] or "", reverse=True)]
    return {"disk": disk, "last_commit": commit, "sync": sync_state(syncer), "agents": heard}
