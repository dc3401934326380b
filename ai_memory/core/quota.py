"""The per-user daily storage quota: bytes each user stored on one UTC day, against a limit (no I/O).

The day is passed in; a call on a new day starts every count at zero. A charge that would take
a user past the limit is refused and counts nothing; a charge for an event that was not stored
after all (a duplicate, a failed write) is given back.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DailyBytes:
    limit: int  # bytes per user per day; 0 or less: no limit
    day: str = ""
    used: dict[str, int] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    def seed(self, day: str, used: dict[str, int]) -> None:
        """What each user stored on ``day`` before this process counted (read from the store)."""
        self.day, self.used = day, {user: int(n) for user, n in used.items()}

    def take(self, user: str, size: int, day: str) -> bool:
        """Count ``size`` bytes for ``user`` on ``day``; False (nothing counted) past the limit."""
        if not self.enabled:
            return True
        if day != self.day:
            self.day, self.used = day, {}
        now = self.used.get(user, 0)
        if now + size > self.limit:
            return False
        self.used[user] = now + size
        return True

    def give_back(self, user: str, size: int, day: str) -> None:
        if self.enabled and day == self.day and user in self.used:
            self.used[user] = max(0, self.used[user] - size)

    def today(self, day: str) -> dict[str, int]:
        return dict(self.used) if day == self.day else {}
