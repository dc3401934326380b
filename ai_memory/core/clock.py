"""The one spelling of a moment that ai-memory stores and compares: sortable UTC text with
microseconds (2026-11-30T10:00:00.000000Z). Rows, frontmatter and cut-offs compare these as
strings, so every writer of one must use this module, and every reader of one parses it here
(``parse_utc``: what a person or another tool wrote too, with or without a zone)."""

from __future__ import annotations

from datetime import datetime, timezone

ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_iso(moment: datetime) -> str:
    """``moment`` as stored: 2026-11-30T10:00:00.000000Z."""
    return moment.astimezone(timezone.utc).strftime(ISO_FORMAT)


def now_iso() -> str:
    """This moment as stored."""
    return utc_iso(datetime.now(timezone.utc))


def end_of_day(day: str) -> str:
    """The last stored moment of a UTC day (2026-11-30): what "as of that day" includes."""
    return f"{day}T23:59:59.999999Z"


def utc_day(moment: datetime) -> str:
    """The UTC day of ``moment``: 2026-11-30 (what daily counts are keyed by)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d")


def parse_utc(text: str) -> datetime:
    """An ISO-8601 moment as an aware UTC datetime; one without a zone is read as UTC.
    ValueError when it is none."""
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def utc_from_timestamp(seconds: float) -> str:
    """Epoch seconds (a git commit's time, a file's mtime) as stored."""
    return utc_iso(datetime.fromtimestamp(seconds, tz=timezone.utc))
