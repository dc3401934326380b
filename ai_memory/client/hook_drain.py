"""Delivering the hook spool to a daemon on another machine: one drain process at a time.

A local daemon drains its own ``spool/``; a remote one cannot see it, so the client does. The
hook client spools every event (within its 150 ms budget) and starts a detached drain; an
``flock`` on ``<data_dir>/client/drain.lock`` lets exactly one drain run, the others exit at
once. The drain sends files oldest first through the resilient client, so the breaker rules
apply: a connection failure stops it at once and the open breaker keeps later drains off the
network; files stay in the spool until a later hook (or ``ai-memory hook --drain``) drains again.
Each envelope carries its idempotency key, so a file delivered twice is stored once.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from ai_memory.client.project import resolve_project
from ai_memory.client.resilient import ClientSettings, ResilientClient
from ai_memory.client.state_files import try_lock
from ai_memory.core.errors import DaemonUnavailable
from ai_memory.core.agent_dialects import in_common_terms
from ai_memory.core.agent_payloads import CWD_KEYS
from ai_memory.core.spool_record import parse_spool_record

_STOP = {401, 403, 408, 429}  # the server or the token is the problem, not the file


@dataclass
class DrainReport:
    delivered: int = 0
    quarantined: int = 0
    left: int = 0
    stopped: str | None = None
    busy: bool = False  # another drain holds the lock

    def as_json(self) -> dict[str, object]:
        return {"delivered": self.delivered, "quarantined": self.quarantined, "left": self.left,
                "stopped": self.stopped, "busy": self.busy}


def drain_lock(state_dir: Path) -> AbstractContextManager[bool]:
    """True for the one drain that may run now."""
    return try_lock(state_dir / "drain.lock")


def drain_spool(settings: ClientSettings, spool_dir: Path) -> DrainReport:
    """Deliver the spool unless another drain is at it; loop while new files keep arriving."""
    report = DrainReport()
    while True:
        with drain_lock(settings.state_dir) as mine:
            if not mine:
                report.busy = True
                return report
            _drain_once(ResilientClient(settings), spool_dir, report)
        # A file spooled after our last scan but while we held the lock found the lock taken:
        # look once more now that it is free, so nothing waits for the next hook.
        if report.stopped or not _pending(spool_dir):
            report.left = len(_pending(spool_dir))
            return report


def _pending(spool_dir: Path) -> list[Path]:
    try:
        return sorted(spool_dir.glob("*.json"))
    except OSError:
        return []


def _drain_once(client: ResilientClient, spool_dir: Path, report: DrainReport) -> None:
    for file in _pending(spool_dir):
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            continue  # another delivery removed it
        envelope = _json(data)
        if envelope is None:  # not JSON: no server can take it
            _quarantine(file)
            report.quarantined += 1
            continue
        try:
            reply = client.request("POST", "/hook/envelope", with_project(envelope))
        except DaemonUnavailable as exc:
            report.stopped = exc.message
            return
        if reply.ok:
            file.unlink(missing_ok=True)
            report.delivered += 1
        elif reply.status in _STOP or reply.status >= 500:
            report.stopped = f"the server answered {reply.status}"
            return
        else:  # a 4xx for this file: keep it for a person, out of the way (as the daemon's drain does)
            _quarantine(file)
            report.quarantined += 1


def with_project(envelope: object) -> object:
    """The envelope with the project its cwd belongs to here, where the payload names none: the
    server never looks a client's path up on its own disk, so the client names the project."""
    if not isinstance(envelope, dict):
        return envelope
    payload = envelope.get("payload")
    if not isinstance(payload, dict) or "project" in payload:
        return envelope
    common = in_common_terms(str(envelope.get("agent") or ""), payload)  # Cline's workspaceRoots, Cursor's roots
    cwd = next((common[k] for k in CWD_KEYS if isinstance(common.get(k), str) and common[k]), None)
    if cwd is None:
        return envelope
    return {**envelope, "payload": {**payload, "project": resolve_project(cwd).name}}


def _json(data: bytes) -> object | None:
    try:
        return parse_spool_record(data)
    except ValueError:
        return None


def _quarantine(file: Path) -> None:
    bad = file.parent / "bad"
    bad.mkdir(exist_ok=True, mode=0o700)
    try:
        os.replace(file, bad / file.name)
    except OSError:
        pass  # already moved or removed by another delivery
