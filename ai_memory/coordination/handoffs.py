"""Handoffs between agents: begin one on purpose, list, cancel, and claim-once acceptance."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from ai_memory.coordination.cancelling import cancelled
from ai_memory.core.clock import utc_iso
from ai_memory.core.errors import InputError
from ai_memory.core.sanitizer import TextKind, sanitize
from ai_memory.core.wire import MAX_ITEMS
from ai_memory.store.handoffs import (
    Receiver, cancel_handoff, claim_handoffs as claim_rows, insert_manual_handoff, list_handoffs,
)
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer, WriteTx

LIVE_MINUTES = 10
EXPIRE_DAYS = 14
STATES = ("open", "accepted", "expired", "cancelled")
_LISTS = ("open_questions", "files_touched", "next_steps")


def real_dir(cwd: str, paths_here: bool = True) -> str:
    """Symlinks resolved when the directory is on this machine and exists (a path from another
    machine is kept as it came: never looked up on this disk)."""
    return os.path.realpath(cwd) if paths_here and os.path.isdir(cwd) else cwd


def _line(value: object, key: str, kind: TextKind = TextKind.SUMMARY) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f"{key} must be a string")
    return sanitize(value, kind).text.strip() or None


def _items(value: object, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and len(value) > MAX_ITEMS:
        raise InputError(f"too many {key}", detail=f"at most {MAX_ITEMS}")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{key} must be a list of strings")
    return [sanitize(v, TextKind.NOTIFICATION).text for v in value if v.strip()]


def parse_manual(body: object, *, project: str | None, owner: str, now: datetime,
                 paths_here: bool = True) -> dict[str, Any]:
    """Validate and sanitize a POST /v1/handoffs body into a handoff record."""
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object", detail='{"summary": "...", "cwd": "/repo", "next_steps": []}')
    summary = _line(body.get("summary"), "summary")
    if not summary:
        raise InputError("missing summary", detail="say what was done and where it stands")
    if not project:
        raise InputError("missing project", detail="pass project, or cwd to derive it from")
    cwd = _line(body.get("cwd"), "cwd", TextKind.NOTIFICATION)
    shared = body.get("shared", False)
    if not isinstance(shared, bool):
        raise InputError("shared must be true or false")
    record: dict[str, Any] = {
        "project": project, "cwd": real_dir(cwd, paths_here) if cwd else None, "summary": summary, "owner": owner,
        "shared": shared, "created_at": utc_iso(now),
        **{key: _items(body.get(key), key) for key in _LISTS},
    }
    for key in ("from_agent", "to_agent", "model", "session_id"):
        record[key] = _line(body.get(key), key, TextKind.TITLE)
    return record


async def begin(writer: Writer, record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(handoff, created): False when its idempotency key was seen before."""
    return await writer.submit_wait(lambda tx: insert_manual_handoff(tx.conn, record))


async def cancel(writer: Writer, handoff_id: str, owner: str) -> dict[str, Any]:
    """Cancel an open handoff; 404 when the caller cannot see it, 409 when it is no longer open."""
    handoff = await writer.submit_wait(lambda tx: cancel_handoff(tx.conn, handoff_id, owner))
    return cancelled(handoff, kind="handoff", record_id=handoff_id, owner=owner,
                     only="the handoff's owner", whose="it belongs to")


async def listing(reader: Reader, *, owner: str, project: str | None, state: str | None) -> list[dict[str, Any]]:
    """The handoffs ``owner`` may see (their own, or shared), of a project and a state or all."""
    if state is not None and state not in STATES:
        raise InputError(f"unknown state {state!r}", detail="one of " + ", ".join(STATES))
    return await reader.run(lambda c: list_handoffs(c, owner=owner, project=project, state=state))


async def accept(writer: Writer, *, cwd: str, session_id: str, agent: str | None = None,
                 project: str | None = None, owner: str = "local", now: datetime | None = None,
                 paths_here: bool = True) -> dict[str, Any] | None:
    """Claim the best matching handoff for this session, or None; exactly one caller wins each one."""
    who = Receiver(cwd=real_dir(cwd, paths_here), session_id=session_id, agent=agent, project=project, owner=owner)
    claimed = await claim_handoffs(writer, who, now=now)
    return claimed[0] if claimed else None


async def claim_handoffs(writer: Writer, who: Receiver, *, now: datetime | None = None,
                fits: Callable[[list[dict[str, Any]]], bool] | None = None) -> list[dict[str, Any]]:
    """Claim the matching handoffs, best first, as many as ``fits`` accepts (by default one)."""
    moment = now or datetime.now(timezone.utc)

    def job(tx: WriteTx) -> list[dict[str, Any]]:
        return claim_rows(
            tx.conn, who, now=utc_iso(moment),
            live_after=utc_iso(moment - timedelta(minutes=LIVE_MINUTES)),
            expire_before=utc_iso(moment - timedelta(days=EXPIRE_DAYS)),
            **({"fits": fits} if fits is not None else {}),
        )

    return await writer.submit_wait(job)


def render_handoff(handoff: dict[str, Any]) -> list[str]:
    """Markdown lines for the briefing: what the previous agent left for this one."""
    origin = handoff.get("from_agent") or "an agent"
    when = str(handoff.get("created_at") or "")[:16].replace("T", " ")
    place = handoff.get("cwd") or f"project {handoff.get('project')}"
    kind = "Handoff" if handoff.get("kind") != "manual" else "Handoff (left on purpose)"
    lines = [f"{kind} from {origin} ({when}, {place}):"]
    if handoff.get("summary"):
        lines.append(_clip(f"- Summary: {handoff['summary']}", 1500))
    for title, key in (("Next steps", "next_steps"), ("Open questions", "open_questions"),
                       ("Files touched", "files_touched")):
        items = handoff.get(key) or []
        if items:
            lines.append(f"- {title}:")
            lines += [_clip(f"  - {item}", 400) for item in items[:20]]
    return lines


def _clip(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 2] + " …"
