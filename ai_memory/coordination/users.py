"""Who a bearer token belongs to: the admin token, or a team user's (kept in memory, by hash).

The registry is loaded once at start; while the daemon runs, users are added and revoked only
through it (the CLI goes through the daemon then), so the in-memory map is always current and a
revoked token is refused by the very next request, without a restart.
"""

from __future__ import annotations

import hmac
import logging
import time
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError
from ai_memory.core.users import ADMIN, check_name, new_token, token_hash
from ai_memory.store.audit import record_audit
from ai_memory.store.reader import Reader
from ai_memory.store.users import active_token_hashes, add_user, list_users, revoke_user, touch_user
from ai_memory.store.writer import Writer

log = logging.getLogger(__name__)
TOUCH_EVERY_S = 60.0  # last_used is kept to the minute: one write per user per minute at most


class Users:
    def __init__(self, admin_token: str, writer: Writer, reader: Reader) -> None:
        self._admin = admin_token.encode()
        self._writer = writer
        self._reader = reader
        self._by_hash: dict[str, str] = {}
        self._touched: dict[str, float] = {}

    async def load(self) -> None:
        self._by_hash = await self._reader.run(active_token_hashes)

    def identify(self, token: str) -> str | None:
        """The user a token belongs to, ``local`` for the admin token, None for anything else.

        The admin token is compared in constant time; user tokens are found by their SHA-256,
        whose value an attacker cannot steer, so the dict lookup leaks nothing useful.
        """
        if not token:
            return None
        if hmac.compare_digest(token.encode(), self._admin):
            return ADMIN
        return self._by_hash.get(token_hash(token))

    def active(self, user: str) -> bool:
        """Whether ``user`` still has a live token (the admin always has): a revoked user's
        web-view session ends with the token."""
        return user == ADMIN or user in self._by_hash.values()

    async def seen(self, user: str) -> None:
        """Record that ``user`` called (at most once a minute); a busy writer skips a stamp."""
        now = time.monotonic()
        if user == ADMIN or now - self._touched.get(user, -TOUCH_EVERY_S) < TOUCH_EVERY_S:
            return
        self._touched[user] = now
        try:
            await self._writer.submit(touch_user(user, now_iso()))
        except AiMemoryError as exc:
            log.info("last_used of %s not recorded: %s", user, exc.message)

    async def add(self, requested: object, by: str) -> tuple[dict[str, Any], str]:
        """A new user and its token (the only time the token exists outside its owner's hands)."""
        name = check_name(requested)
        token = new_token()
        hashed = token_hash(token)
        row = await self._writer.submit_wait(add_user(name, hashed, now_iso()))
        self._by_hash = {h: n for h, n in self._by_hash.items() if n != name} | {hashed: name}
        await self._writer.submit_wait(record_audit(now_iso(), by, "user.add", name))
        return row, token

    async def revoke(self, name: str, by: str) -> dict[str, Any]:
        # refused in memory first: even if the write below fails, this daemon stops accepting it
        self._by_hash = {h: n for h, n in self._by_hash.items() if n != name}
        row = await self._writer.submit_wait(revoke_user(name, now_iso()))
        await self._writer.submit_wait(record_audit(now_iso(), by, "user.revoke", name))
        return row

    async def listing(self) -> list[dict[str, Any]]:
        return await self._reader.run(list_users)
