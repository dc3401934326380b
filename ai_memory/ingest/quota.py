"""Each team user's daily storage quota on hook events (``server.user_bytes_per_day``).

Counted in memory (``core.quota.DailyBytes``): no query on the hook path. At start the counts are
seeded from the events stored since 00:00 UTC (``store.observations.stored_bytes_since``), so a
restart does not hand out a second quota; at UTC midnight every count starts again. The admin
(the data dir's token: local hooks, the spool, imports) is not counted, as it is not rate limited:
its writes are the operator's own, and the writer queue's 429 bounds them already.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from ai_memory.core.clock import utc_iso
from ai_memory.core.errors import QuotaExceeded
from ai_memory.core.quota import DailyBytes
from ai_memory.core.users import ADMIN
from ai_memory.store.observations import stored_bytes_since
from ai_memory.store.reader import Reader


def _midnight(moment: datetime) -> datetime:
    return datetime.combine(moment.date(), datetime.min.time(), tzinfo=timezone.utc)


class StorageQuota:
    def __init__(self, bytes_per_day: int,
                 clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        self._counts = DailyBytes(bytes_per_day)
        self._clock = clock

    @property
    def limit(self) -> int:
        return self._counts.limit

    async def load(self, reader: Reader) -> None:
        """Seed today's counts from the events already stored today."""
        if not self._counts.enabled:
            return
        start = _midnight(self._clock())
        since = utc_iso(start)
        used = await reader.run(lambda c: stored_bytes_since(c, since))
        self._counts.seed(start.date().isoformat(), {u: n for u, n in used.items() if u != ADMIN})

    def check(self, owner: str) -> None:
        """QuotaExceeded when ``owner`` has no byte left today: refused before its payload is
        parsed and sanitized (the work a hook event costs)."""
        if owner != ADMIN and self._counts.enabled:
            now = self._clock()
            if self._counts.today(now.date().isoformat()).get(owner, 0) >= self.limit:
                self._refuse(owner, now)

    def charge(self, owner: str, size: int) -> None:
        """Count an event of ``size`` bytes for ``owner``; QuotaExceeded (429, retry at the next
        UTC midnight) when it would take them past today's quota."""
        if owner == ADMIN:
            return
        now = self._clock()
        if not self._counts.take(owner, size, now.date().isoformat()):
            self._refuse(owner, now)

    def _refuse(self, owner: str, now: datetime) -> None:
        wait = (_midnight(now) + timedelta(days=1) - now).total_seconds()
        used = self._counts.today(now.date().isoformat()).get(owner, 0)
        raise QuotaExceeded("daily storage quota exceeded",
                            f"{owner} stored {used:,} of {self.limit:,} bytes of events today (server.user_bytes_per_day);"
                            " more is taken from 00:00 UTC", retry_after=wait)

    def refund(self, owner: str, size: int) -> None:
        """Give back a charge for an event that was not stored after all (a duplicate, a failure)."""
        if owner != ADMIN:
            self._counts.give_back(owner, size, self._clock().date().isoformat())

    def describe(self) -> dict[str, object]:
        return {"bytes_per_day": self.limit, "today": self._counts.today(self._clock().date().isoformat())}
