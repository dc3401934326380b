"""The audit row of a request's write (``coordination.audit_log``), noting when the admin token
acted for someone else."""

from __future__ import annotations

from aiohttp import web

from ai_memory.coordination.audit_log import record
from ai_memory.server.identity import LOCAL_OWNER, token_user
from ai_memory.server.keys import RUNTIME


async def audit(request: web.Request, who: str, action: str, target: str, detail: str = "") -> None:
    """Record ``action`` on ``target`` by ``who`` (the caller; the admin token acting for someone is noted)."""
    if token_user(request) == LOCAL_OWNER and who != LOCAL_OWNER:
        detail = f"{detail} (admin token)".strip()
    await record(request.app[RUNTIME].writer, who, action, target, detail)
