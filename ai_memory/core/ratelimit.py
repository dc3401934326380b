"""The per-token rate limit: one token bucket per user, with the clock passed in (no I/O).

Each user's bucket refills at ``rate`` requests per second up to ``burst``; a request takes one.
A caller with an empty bucket is told how long until the next token, which the server sends as
``Retry-After``. Buckets of users idle long enough to be full again are dropped, so the map stays
bounded by the number of users active in the last few seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class RateLimiter:
    rate: float  # requests per second; 0 or less disables the limit
    burst: float
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return self.rate > 0

    def take(self, user: str, now: float) -> float:
        """0.0 when ``user`` may proceed (one token spent), else the seconds until it may."""
        if not self.enabled:
            return 0.0
        capacity = max(self.burst, 1.0)
        bucket = self._buckets.get(user)
        if bucket is None:
            bucket = self._buckets[user] = _Bucket(capacity, now)
        bucket.tokens = min(capacity, bucket.tokens + (now - bucket.stamp) * self.rate)
        bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            self._forget_idle(now, capacity)
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _forget_idle(self, now: float, capacity: float) -> None:
        if len(self._buckets) <= 1024:
            return
        full_after = capacity / self.rate
        self._buckets = {u: b for u, b in self._buckets.items() if now - b.stamp < full_after}
