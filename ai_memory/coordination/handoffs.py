"""Handoffs between agents: claim-once acceptance for a session starting in a directory."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from typing import Any

from ai_memory.store.handoffs import claim_handoff
from ai_memory.store.writer import Writer, WriteTx

LIVE_MINUTES = 10
EXPIRE_DAYS = 14


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def real_dir(cwd: str) -> str:
    """Symlinks resolved when the directory exists here (a remote client's path is kept as is)."""
    return os.path.realpath(cwd) if os.path.isdir(cwd) else cwd


async def accept(writer: Writer, *, cwd: str, session_id: str, now: datetime | None = None) -> dict[str, Any] | None:
    """Claim the matching handoff for this session, or None; exactly one caller wins each one."""
    moment = now or datetime.now(timezone.utc)
    place = real_dir(cwd)

    def job(tx: WriteTx) -> dict[str, Any] | None:
        return claim_handoff(
            tx.conn, cwd=place, session_id=session_id, now=_stamp(moment),
            live_after=_stamp(moment - timedelta(minutes=LIVE_MINUTES)),
            expire_before=_stamp(moment - timedelta(days=EXPIRE_DAYS)),
        )

    return await writer.submit_wait(job)


def render_handoff(handoff: dict[str, Any]) -> list[str]:
    """Markdown lines for the briefing: what the previous agent left for this one."""
    lines = [f"Handoff from {handoff.get('from_agent') or 'an agent'} "
             f"({str(handoff.get('created_at') or '')[:16].replace('T', ' ')}, {handoff.get('cwd')}):"]
    if handoff.get("summary"):
        lines.append(f"- Summary: {handoff['summary']}")
    for title, key in (("Open questions", "open_questions"), ("Next steps", "next_steps"),
                       ("Files touched", "files_touched")):
        items = handoff.get(key) or []
        if items:
            lines.append(f"- {title}:")
            lines += [f"  - {item}" for item in items[:20]]
    return lines
