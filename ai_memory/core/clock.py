"""The one spelling of a moment that ai-memory stores and compares: sortable UTC text with
microseconds (2026-11-30T10:00:00.000000Z). Rows, frontmatter and cut-offs compare these as
strings, so every writer of one must use this module."""

from __future__ import annotations

from datetime import datetime, timezone

ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_iso(moment: datetime) -> str:
    """``moment`` as stored: 2026-11-30T10:00:00.000000Z."""
    return moment.astimezone(timezone.utc).strftime(ISO_FORMAT)


def now_iso() -> str:
    """This moment as stored."""
    return utc_iso(datetime.now(timezone.utc))


def utc_from_timestamp(seconds: float) -> str:
    """Epoch seconds (a git commit's time, a file's mtime) as stored."""
    return utc_iso(datetime.fromtimestamp(seconds, tz=timezone.utc))
