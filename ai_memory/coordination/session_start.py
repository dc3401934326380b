"""The SessionStart use case: claim what a new session should take over, then assemble its
briefing. The HTTP route, the MCP tool and the web view all come here; only a caller that
names a session and asks to claim (a POST) takes a handoff or messages."""

from __future__ import annotations

from dataclasses import dataclass
import sqlite3
from typing import Any

from ai_memory.coordination.briefing import (
    CAPS, Section, lines_that_fit, memory_sections, recent_sessions, render, session_section,
)
from ai_memory.coordination.handoffs import claim_handoffs, real_dir, render_handoff
from ai_memory.coordination.messages import claim, render_messages
from ai_memory.core.clock import now_iso
from ai_memory.store.handoffs import Receiver
from ai_memory.store.messages import list_messages
from ai_memory.store.reader import Reader
from ai_memory.store.recall_given import Given, record_given
from ai_memory.store.writer import Writer

BRIEFING_MESSAGES = 10
BRIEFING_HANDOFFS = 3  # agents that ended in parallel in one place: each leaves its handoff


@dataclass(frozen=True)
class Briefing:
    project: str
    text: str
    sessions: int
    handoffs: list[dict[str, Any]]  # newest first (one begun on purpose before any automatic one)
    messages: list[dict[str, Any]]

    @property
    def handoff(self) -> dict[str, Any] | None:
        return self.handoffs[0] if self.handoffs else None


async def brief(writer: Writer, reader: Reader, *, project: str, cwd: str, owner: str,
                session_id: str | None = None, agent: str | None = None, claim_work: bool = False,
                paths_here: bool = True) -> Briefing:
    """The briefing for a session starting in ``cwd``; with ``claim_work`` and a session, it
    takes the handoffs meant for it and the messages it has room to show (each exactly once)."""
    now = now_iso()
    claiming = claim_work and bool(session_id)
    handoffs: list[dict[str, Any]] = []
    if claiming:
        who = Receiver(cwd=real_dir(cwd, paths_here), session_id=str(session_id), agent=agent, project=project,
                       owner=owner)
        handoffs = await claim_handoffs(writer, who, fits=_fit_in_briefing)

    def read(conn: sqlite3.Connection) -> tuple[list[Section], list[dict[str, Any]], int]:
        sessions = recent_sessions(conn, project, session_id)
        waiting = list_messages(conn, project=project, state="open", now=now, limit=BRIEFING_MESSAGES)
        return [session_section(sessions)] + memory_sections(conn, project, owner, now), waiting, len(sessions)

    later, waiting, session_count = await reader.run(read)
    handoff_section = Section("", _handoff_lines(handoffs), CAPS["handoff"])
    popped = await _deliver(writer, waiting, session_id) if claiming else []
    sections = [handoff_section, Section("Messages for this project:", render_messages(popped), CAPS["messages"]),
                *later]
    shown = render(project, sections)
    if claiming and shown.pages:  # a session's own briefing: prompt recall does not repeat its pages
        await writer.submit_wait(record_given(str(session_id), owner, [Given(path, "briefing")
                                                                       for path in shown.pages], now))
    return Briefing(project, shown.text, session_count, handoffs, popped)


def _handoff_lines(handoffs: list[dict[str, Any]]) -> list[str]:
    return [line for handoff in handoffs for line in render_handoff(handoff)]


def _fit_in_briefing(handoffs: list[dict[str, Any]]) -> bool:
    """Whether these handoffs can all be shown whole in the briefing's share for handoffs: one
    that would be cut stays open for the next session."""
    lines = _handoff_lines(handoffs)
    return len(handoffs) <= BRIEFING_HANDOFFS and lines_that_fit(Section("", lines), CAPS["handoff"]) == len(lines)


async def _deliver(writer: Writer, waiting: list[dict[str, Any]], session_id: str | None) -> list[dict[str, Any]]:
    """Claim the messages the briefing has room to show: a message is delivered exactly once,
    and one that would be cut for size stays open for the next session."""
    if not session_id or not waiting:
        return []
    room = lines_that_fit(Section("Messages for this project:", render_messages(waiting)), CAPS["messages"])
    return await claim(writer, [m["id"] for m in waiting[:room]], session_id=session_id)
