"""Forgetting by rules, and feedback: pure functions, no I/O.

    retention = salience · e^(−λ·age_days) + σ · ln(1 + access_count) · e^(−μ·days_since_access)

The first term is what the page is worth by itself, fading with age; the second is what use
has shown it to be worth, fading since its last use. Only episodic pages decay: semantic and
procedural pages (facts, decisions, rules, procedures) stay until they expire. Pinned pages
and superseded pages (history, kept for lineage) never decay. Expiry (``expires_at``) removes
any page that is not pinned: a pin is a person's explicit word, and outranks a rule.

Feedback moves a page's salience within [SALIENCE_MIN, SALIENCE_MAX]; salience feeds both
retention and a bounded search-authority factor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any

from ai_memory.core.clock import parse_utc
from ai_memory.core.errors import InputError

DEFAULT_LAMBDA = 0.02
DEFAULT_SIGMA = 0.6
DEFAULT_MU = 0.04
DEFAULT_COLD_THRESHOLD = 0.20
DEFAULT_PURGE_DAYS = 180.0
DECAYING_TIERS = frozenset({"episodic"})

SALIENCE_DEFAULT, SALIENCE_MIN, SALIENCE_MAX = 1.0, 0.25, 2.0
# Asymmetric on purpose: one "wrong" should outweigh one "helpful", since acting on a wrong
# memory costs more than missing a helpful one.
FEEDBACK_DELTAS = {"helpful": 0.25, "not_helpful": -0.25, "stale": -0.5, "wrong": -0.75}
# Salience scales search authority by at most ±20 %: feedback nudges ranking, never decides it.
AUTHORITY_SLOPE, AUTHORITY_FACTOR_MIN, AUTHORITY_FACTOR_MAX = 0.2, 0.8, 1.2

REASON_COLD, REASON_EXPIRED = "cold", "expired"
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class RetentionParams:
    """The knobs of forgetting (config keys ``forget.*``)."""

    lam: float = DEFAULT_LAMBDA
    sigma: float = DEFAULT_SIGMA
    mu: float = DEFAULT_MU
    cold_threshold: float = DEFAULT_COLD_THRESHOLD
    purge_days: float = DEFAULT_PURGE_DAYS


@dataclass(frozen=True)
class PageFacts:
    """What the sweep knows about one indexed page (from its row and its page_stats)."""

    path: str
    tier: str
    pinned: bool
    superseded: bool
    changed_at: datetime | None  # updated, else created, else the file's mtime
    expires_at: datetime | None
    salience: float = SALIENCE_DEFAULT
    access_count: int = 0
    last_access_at: datetime | None = None


@dataclass(frozen=True)
class Verdict:
    """Why a page goes: its reason and the retention it scored (None for expiry)."""

    reason: str
    retention: float | None
    age_days: float


def retention(salience: float, age_days: float, access_count: int, days_since_access: float,
              params: RetentionParams) -> float:
    """The retention score; negative ages (clock skew, dates in the future) count as zero."""
    fading = salience * math.exp(-params.lam * max(0.0, age_days))
    use = params.sigma * math.log1p(max(0, access_count)) * math.exp(-params.mu * max(0.0, days_since_access))
    return fading + use


def days_between(earlier: datetime | None, later: datetime) -> float:
    """Days from ``earlier`` to ``later``; 0 when unknown."""
    if earlier is None:
        return 0.0
    return (later - earlier).total_seconds() / SECONDS_PER_DAY


def judge(page: PageFacts, now: datetime, params: RetentionParams) -> Verdict | None:
    """The sweep's one decision: None keeps the page, a Verdict removes it."""
    age = days_between(page.changed_at, now)
    if page.pinned:
        return None
    if page.expires_at is not None and page.expires_at <= now:
        return Verdict(REASON_EXPIRED, None, age)
    if page.tier not in DECAYING_TIERS or page.superseded or page.changed_at is None:
        return None  # an undated page cannot be aged: keeping it is the safe mistake
    score = retention(page.salience, age, page.access_count, days_between(page.last_access_at, now), params)
    return Verdict(REASON_COLD, score, age) if score < params.cold_threshold else None


def parse_moment(value: Any) -> datetime | None:
    """A frontmatter or index date (``2025-03-01``, ``2025-03-01T10:00:00Z``, ``... +00:00``) as
    an aware UTC datetime; None when absent or unreadable (a hand edit we will not guess at)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        try:
            return parse_utc(str(value))
        except ValueError:
            return None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def apply_feedback(salience: float, signal: str) -> float:
    """The salience after one feedback signal, clamped; InputError for an unknown signal."""
    if signal not in FEEDBACK_DELTAS:
        raise InputError(f"unknown signal {signal!r}", detail="one of " + ", ".join(FEEDBACK_DELTAS))
    return clamp_salience(salience + FEEDBACK_DELTAS[signal])


def clamp_salience(value: float) -> float:
    return max(SALIENCE_MIN, min(SALIENCE_MAX, value))


def authority_factor(salience: float | None) -> float:
    """Search authority from salience: 1.0 at the default, within [0.8, 1.2]."""
    if salience is None:
        return 1.0
    factor = 1.0 + AUTHORITY_SLOPE * (salience - SALIENCE_DEFAULT)
    return max(AUTHORITY_FACTOR_MIN, min(AUTHORITY_FACTOR_MAX, factor))
