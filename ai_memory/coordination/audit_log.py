"""Appending to the audit log after a write succeeded (who did what to which record), and reading it.

The row is written after the action, in its own writer job: the action's answer never depends
on it, but a failure to record it is logged as an error, never dropped silently.
"""

from __future__ import annotations

import logging
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError
from ai_memory.store.audit import list_audit, record_audit
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer

log = logging.getLogger(__name__)


async def record(writer: Writer, who: str, action: str, target: str, detail: str = "") -> None:
    """Record ``action`` on ``target`` by ``who``; waits for room: a write is never refused for its audit."""
    try:
        await writer.submit_wait(record_audit(now_iso(), who, action, target, detail))
    except AiMemoryError as exc:
        log.error("audit row lost: %s %s %s by %s: %s", action, target, detail, who, exc.message)


async def entries(reader: Reader, limit: int, user: str | None = None) -> list[dict[str, Any]]:
    """The newest ``limit`` entries first, of one user or of all."""
    return await reader.run(lambda c: list_audit(c, limit, user))
