"""How the web view spells values for people: moments, durations, sizes and counts. Every
template shows them through these filters, so a time reads the same on every page.

A moment is a ``<time>`` element: its ``datetime`` the exact UTC instant, its ``title`` the
exact time to the second, its text the minute in UTC ("2026-12-07 05:04 UTC"). ``ui.js`` then
rewrites the text in the browser's own zone and as a relative time ("3 min ago"); without script
the UTC text still reads well.
"""

from __future__ import annotations

import json
from datetime import datetime

from markupsafe import Markup, escape

from ai_memory.core.clock import parse_utc, utc_from_timestamp, utc_iso

NOTHING = "—"
SIZE_UNITS = ("B", "KB", "MB", "GB", "TB")
# (seconds in the unit, its name): the two largest that fit make a duration
DURATION_UNITS = ((86400, "d"), (3600, "h"), (60, "min"), (1, "s"))
# a moment's styles: "ago" (relative, the default), "clock" (a time of day, for a timeline), "day"
STYLES = frozenset({"ago", "clock", "day"})


def moment(value: str | float | datetime | None, style: str = "ago") -> Markup:
    """A stored moment (ISO text, epoch seconds or a datetime) as a ``<time>`` element; a dash
    for none, and the text itself for what is no moment."""
    if value is None or value == "":
        return Markup(f'<span class="muted">{NOTHING}</span>')
    try:
        when = _parsed(value)
    except (ValueError, TypeError, OverflowError, OSError):
        return Markup(escape(str(value)))
    iso, shown = utc_iso(when), _utc_text(when, style)
    exact = when.strftime("%Y-%m-%d %H:%M:%S UTC")
    return Markup(f'<time datetime="{iso}" title="{exact}" data-style="{style if style in STYLES else "ago"}">'
                  f"{shown}</time>")  # noqa: S704 - every piece is made here from a parsed moment


def _parsed(value: str | float | datetime) -> datetime:
    if isinstance(value, datetime):
        return parse_utc(utc_iso(value))
    if isinstance(value, (int, float)):
        return parse_utc(utc_from_timestamp(float(value)))
    return parse_utc(str(value))


def _utc_text(when: datetime, style: str) -> str:
    if style == "clock":
        return when.strftime("%H:%M:%S UTC")
    if style == "day":
        return when.strftime("%Y-%m-%d")
    return when.strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: float | None) -> str:
    """A span of time in its two largest units: "8 s", "3 min 20 s", "2 h 5 min", "3 d 4 h"."""
    if seconds is None:
        return NOTHING
    left = max(0, int(seconds))
    for i, (unit, name) in enumerate(DURATION_UNITS):
        if left >= unit or unit == 1:
            first = f"{left // unit} {name}"
            if i + 1 == len(DURATION_UNITS) or not (rest := left % unit // DURATION_UNITS[i + 1][0]):
                return first
            return f"{first} {rest} {DURATION_UNITS[i + 1][1]}"
    return NOTHING


def size(count: int | float | None) -> str:
    """Bytes as a person reads them: "512 B", "1.4 KB", "23 MB"."""
    if count is None:
        return NOTHING
    value, unit = float(count), SIZE_UNITS[0]
    for unit in SIZE_UNITS:
        if value < 1024 or unit == SIZE_UNITS[-1]:
            break
        value /= 1024
    if unit == "B":
        return f"{int(value)} B"
    return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"


def number(count: int | float | None) -> str:
    """A count with thousands separated: 12,345."""
    return NOTHING if count is None else f"{count:,}"


def plural(count: int | None, word: str, many: str | None = None) -> str:
    """"1 page", "3 pages", "1,204 batches"."""
    count = count or 0
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def field(value: object) -> Markup:
    """A frontmatter value: a moment as a ``<time>``, a list as its items, anything else as text."""
    if isinstance(value, (datetime, str)) and _is_moment(value):
        return moment(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return Markup(" ").join(Markup('<span class="tag">{}</span>').format(v) for v in value) or Markup(NOTHING)
    if isinstance(value, bool) or value is None:
        return Markup(escape({True: "yes", False: "no", None: NOTHING}[value]))
    if isinstance(value, dict):
        return Markup("<code>{}</code>").format(json.dumps(value, default=str, ensure_ascii=False))
    return Markup(escape(str(value)))


def _is_moment(value: str | datetime) -> bool:
    if isinstance(value, datetime):
        return True
    if len(value) < 16 or value[10:11] not in ("T", " "):
        return False
    try:
        parse_utc(value)
    except ValueError:
        return False
    return True


FILTERS = {"moment": moment, "duration": duration, "size": size, "number": number, "plural": plural, "field": field}
