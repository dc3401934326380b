"""Who is looking at the web view: one-time login codes, browser sessions, CSRF tokens.

A browser never holds a bearer token. ``ai-memory ui`` asks the daemon (with its token) for a
login code bound to that token's user; the code lives ``CODE_TTL_S`` and works once. The browser
is shown whose account the code opens (``user_of``, which spends nothing), and only a confirmation
sent from the daemon's own page exchanges it (``redeem``) for a random session id in an HttpOnly,
SameSite=Strict cookie. Each session has its
own CSRF token, which every form carries. State is in memory only: a restart logs everyone
out, which costs one more ``ai-memory ui``.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

CODE_TTL_S = 60.0
SESSION_TTL_S = 12 * 3600.0
MAX_CODES = 256
MAX_SESSIONS = 1024


@dataclass(frozen=True)
class UiSession:
    user: str
    csrf: str
    expires: float


class UiAccess:
    """Login codes and sessions; ``clock`` is monotonic seconds (a parameter for the tests of expiry)."""

    def __init__(self, is_active: Callable[[str], bool], clock: Callable[[], float] = time.monotonic) -> None:
        self._is_active = is_active
        self._clock = clock
        self._codes: dict[str, tuple[str, float]] = {}
        self._sessions: dict[str, UiSession] = {}

    def new_code(self, user: str) -> str:
        now = self._clock()
        self._codes = {c: (u, t) for c, (u, t) in self._codes.items() if t > now}
        while len(self._codes) >= MAX_CODES:  # oldest first: a flood of codes never grows memory
            self._codes.pop(next(iter(self._codes)))
        code = secrets.token_urlsafe(24)
        self._codes[code] = (user, now + CODE_TTL_S)
        return code

    def user_of(self, code: str) -> str | None:
        """The user a live code would log in, without spending it; None for any other code."""
        found = self._codes.get(code) if code else None
        if found is None or found[1] <= self._clock() or not self._is_active(found[0]):
            return None
        return found[0]

    def redeem(self, code: str) -> tuple[str, UiSession] | None:
        """A new (session id, session) for a live, unused code; None otherwise. The code is spent."""
        found = self._codes.pop(code, None) if code else None
        now = self._clock()
        if found is None or found[1] <= now or not self._is_active(found[0]):
            return None
        self._sessions = {s: v for s, v in self._sessions.items() if v.expires > now}
        while len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        sid = secrets.token_urlsafe(32)
        session = UiSession(found[0], secrets.token_urlsafe(24), now + SESSION_TTL_S)
        self._sessions[sid] = session
        return sid, session

    def session(self, sid: str | None) -> UiSession | None:
        """The live session of a cookie; a revoked user's session ends at once."""
        found = self._sessions.get(sid) if sid else None
        if found is None:
            return None
        if found.expires <= self._clock() or not self._is_active(found.user):
            self._sessions.pop(sid, None)  # type: ignore[arg-type]
            return None
        return found

    def end(self, sid: str | None) -> None:
        if sid:
            self._sessions.pop(sid, None)


def csrf_ok(session: UiSession, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(session.csrf.encode(), str(sent).encode())
