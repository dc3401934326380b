"""Who is calling: the owner that observations, handoffs, memories and messages are attributed to.

The security middleware sets ``request["user"]`` from the bearer token. A team user's token
speaks for that user only: an ``owner`` in the body or query is ignored. The admin token (the
data dir's ``token``, user ``local``) may name an owner itself (``owner`` in the body or the
query), which keeps two agents' handoffs apart on a single-user daemon and lets tests act as
several people; without one it is ``local``.
"""

from __future__ import annotations

import ipaddress

from aiohttp import web

from ai_memory.core.errors import AuthError, InputError
from ai_memory.core.users import ADMIN, valid_name

LOCAL_OWNER = ADMIN


def token_user(request: web.Request) -> str:
    """The user of the request's token (``local`` for the admin token)."""
    return str(request.get("user", LOCAL_OWNER))


def caller(request: web.Request, body: object = None) -> str:
    user = token_user(request)
    if user != LOCAL_OWNER:
        return user
    named = body.get("owner") if isinstance(body, dict) else None
    named = named or request.query.get("owner")
    if named is None:
        return LOCAL_OWNER
    if not valid_name(named):
        raise InputError("bad owner", detail="letters, digits, '.', '_', '@' and '-', up to 64 characters")
    return named


def require_admin(request: web.Request) -> None:
    """Managing users and reading the audit log need the data dir's own token."""
    if token_user(request) != LOCAL_OWNER:
        raise AuthError("admin only", detail="this needs the data dir's token, not a user token")


def paths_are_here(request: web.Request) -> bool:
    """Whether a path the request names (a payload's ``cwd``) is one on this machine: only for
    the admin token on a loopback connection no proxy forwarded. Any other caller's path is
    read as text alone, never looked up on this disk: a teammate must not learn what the
    server's checkouts hold (their git remotes, their symlinks) by naming paths."""
    if token_user(request) != LOCAL_OWNER or "X-Forwarded-For" in request.headers:
        return False
    try:
        return ipaddress.ip_address((request.remote or "").split("%")[0]).is_loopback
    except ValueError:
        return False
