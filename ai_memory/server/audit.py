"""Appending to the audit log after a write succeeded: who did what to which record.

The row is written after the action, in its own writer job: the action's answer never depends
on it, but a failure to record it is logged as an error, never dropped silently.
"""

from __future__ import annotations

import logging

from aiohttp import web

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError
from ai_memory.server.identity import LOCAL_OWNER, token_user
from ai_memory.server.keys import RUNTIME
from ai_memory.store.audit import record_audit

log = logging.getLogger(__name__)


async def audit(request: web.Request, who: str, action: str, target: str, detail: str = "") -> None:
    """Record ``action`` on ``target`` by ``who`` (the caller; the admin token acting for someone is noted)."""
    if token_user(request) == LOCAL_OWNER and who != LOCAL_OWNER:
        detail = f"{detail} (admin token)".strip()
    job = record_audit(now_iso(), who, action, target, detail)
    try:
        await request.app[RUNTIME].writer.submit_wait(job)  # waits for room: a write is never refused for its audit
    except AiMemoryError as exc:
        log.error("audit row lost: %s %s %s by %s: %s", action, target, detail, who, exc.message)
