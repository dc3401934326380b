"""Who is calling: the owner that handoffs, private memories and messages are attributed to.

A local daemon serves one person, so the caller may name itself (``owner`` in the body or the
query, e.g. to keep two agents' handoffs apart); otherwise it is "local". Per-user tokens in
team mode will replace this with the token's user.
"""

from __future__ import annotations

import re

from aiohttp import web

from ai_memory.core.errors import InputError

LOCAL_OWNER = "local"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


def caller(request: web.Request, body: object = None) -> str:
    named = body.get("owner") if isinstance(body, dict) else None
    named = named or request.query.get("owner")
    if named is None:
        return LOCAL_OWNER
    if not isinstance(named, str) or not _NAME.match(named):
        raise InputError("bad owner", detail="letters, digits, '.', '_', '@' and '-', up to 64 characters")
    return named
