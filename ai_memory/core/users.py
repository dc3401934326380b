"""Team users: names, tokens and their hashes (pure logic, no I/O beyond the OS random source).

A user token is 256 random bits from the OS CSPRNG, shown once; only its SHA-256 is stored.
Slow password KDFs (bcrypt, scrypt, argon2) exist to make guessing *low-entropy* secrets
expensive; nobody can enumerate 2^256 candidates however fast the hash is, so SHA-256 gives up
nothing here, and it lets the daemon find a user by the hash on every request (a salted slow
KDF would cost tens of milliseconds per call and a trial against every user).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import TypeGuard

from ai_memory.core.errors import InputError

ADMIN = "local"  # the data dir's own token: the admin, and the single user of a local daemon
TOKEN_PREFIX = "aim_"  # tells a user token from the admin token at a glance (and to secret scanners)
# fullmatch, never ^...$: "$" also matches before a trailing newline ("alice\n")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


def valid_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` is a user's (an owner's) name as ai-memory writes them."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def check_name(name: object) -> str:
    """A user name: the owner of pages, handoffs and messages; ``local`` is the admin's."""
    if not valid_name(name):
        raise InputError("bad user name", detail="letters, digits, '.', '_', '@' and '-', up to 64 characters")
    if name == ADMIN:
        raise InputError("the name 'local' is the admin token's", detail="choose another user name")
    return name


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def visible_to(owner: str | None, scope: str | None, page_owner: str | None) -> bool:
    """Whether ``owner`` may see a page (or its tombstone): a private one is its owner's alone,
    and a private one with no owner is nobody's. ``visible_sql`` is the same rule in SQL."""
    return scope != "private" or (page_owner is not None and page_owner == owner)


def visible_sql(table: str = "") -> str:
    """``visible_to`` as a WHERE clause over ``table``'s scope and owner; binds the caller once.
    Never NULL (a missing owner compares false), so ``NOT`` of it selects exactly the hidden."""
    t = f"{table}." if table else ""
    return f"(COALESCE({t}scope, '') != 'private' OR COALESCE({t}owner = ?, 0))"
