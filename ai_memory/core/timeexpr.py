"""Time expressions in a query ("in May 2023", "last week", "yesterday", "in 2022") as date ranges.

Pure and deterministic: relative expressions are resolved against a ``now`` the caller passes.
The reranker compares these ranges with page and session dates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta

MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b,?\s*(\d{{4}})?", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b,?\s*(\d{{4}})?", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\s+(?:of\s+)?(\d{{4}})\b", re.I)
_MONTH_ONLY = re.compile(rf"\b(?:in|during|since|before|after|of)\s+{_MONTH}\b", re.I)
_YEAR = re.compile(r"\b(19[7-9]\d|20\d\d)\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
# A bare "the summer" is not a time filter ("plans for the summer" looks ahead); a preposition is.
_SEASON = re.compile(
    r"\b(?:in|during|this|last|over|since|until)\s+(?:the\s+)?(spring|summer|autumn|fall|winter)\b", re.I)
_RELATIVE = {
    "today": (0, 0), "yesterday": (1, 1), "last week": (14, 0), "this week": (7, 0), "past week": (7, 0),
    "last month": (62, 0), "this month": (31, 0), "past month": (31, 0), "last year": (730, 0),
    "this year": (366, 0), "recently": (14, 0), "few days ago": (7, 1), "last few days": (5, 0),
}


# A passage that says when something happened: a relative day or period, a weekday, a month,
# a recent year, a date, or "… ago". Used to answer "when …?" questions, not to filter by date.
# "May" and "March" count only beside a day or a year: alone they are far more often a verb.
_FULL_MONTHS = "january|february|april|june|july|august|september|october|november|december"
_WHEN_WORDS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|recently|(?:last|next|this|past)\s+"
    r"(?:week|weekend|month|year|night|morning|evening|spring|summer|autumn|fall|winter|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekend|"
    rf"{_FULL_MONTHS}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:may|march)|(?:may|march)\s+\d{{1,4}}|"
    r"(?:in|since|until|by|during|early|late|mid)\s+(?:may|march)|"
    r"(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?\s+\d{1,4}|in\s+sept?\b|"
    r"19[7-9]\d|20[0-3]\d|\d{4}-\d{2}-\d{2})\b", re.I)
_ASKS_WHEN = re.compile(r"^\s*(?:when\b|what\s+(?:time|day|date|month|year)\b|how\s+long\s+ago\b)", re.I)


def mentions_time(text: str) -> bool:
    return _WHEN_WORDS.search(text) is not None


def asks_when(question: str) -> bool:
    """A question asking for a time ("When did …", "What year …")."""
    return _ASKS_WHEN.search(question) is not None


@dataclass(frozen=True)
class DateRange:
    """Inclusive dates. ``any_year`` ranges ("in June", "last summer" without a year) match
    those months in every year: the memory may span years, and the query did not say which."""

    start: date
    end: date
    any_year: bool = False

    def _in(self, day: date) -> "DateRange":
        if not self.any_year:
            return self
        start = _safe_date(day.year, self.start.month, self.start.day) or self.start
        end = _safe_date(day.year + (self.end.month < self.start.month), self.end.month, self.end.day) or self.end
        return DateRange(start, end)

    def contains(self, day: date) -> bool:
        r = self._in(day)
        return r.start <= day <= r.end

    def distance_days(self, day: date) -> int:
        if self.contains(day):
            return 0
        if self.any_year:
            return min(DateRange(self._in(d).start, self._in(d).end).distance_days(day)
                       for d in (day.replace(year=day.year - 1, day=1), day.replace(day=1),
                                 day.replace(year=day.year + 1, day=1)))
        return (self.start - day).days if day < self.start else (day - self.end).days


def _month_range(year: int, month: int) -> DateRange:
    start = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return DateRange(start, nxt - timedelta(days=1))


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _named_year(text: str) -> str | None:
    """The one year the text names, if exactly one: "between August 11 and August 15 2023"."""
    years = {m.group(1) for m in _YEAR.finditer(text)}
    return years.pop() if len(years) == 1 else None


def _day_range(year: str | None, month: int, day: int) -> DateRange | None:
    """One day; without a year it matches that day in any year, like "in June" does."""
    found = _safe_date(int(year) if year else 2000, month, day)  # 2000: a leap year keeps 29 February
    if found is None:
        return None
    return DateRange(found, found, any_year=year is None)


# A year alone is a date only where a preposition leads to it ("in 2023"); "port 2048" and
# "error 2024" are not.
_LED_YEAR = re.compile(r"\b(?:in|of|by|since|during|before|after|until)\s+(19[7-9]\d|20\d\d)\b", re.I)
_VERB_MONTHS = ("may", "mar", "march")


def _is_date(match: re.Match[str]) -> bool:
    """A day and a month are a date unless the month could be a verb: a lower-case "may" or
    "march" with no year after it ("step 1 may fail" is not a date; "3 May" is)."""
    month = next((g for g in match.groups() if g and not g.isdigit()), "")
    return month[:1].isupper() or bool(match.group(3)) or month.lower() not in _VERB_MONTHS


def _days(text: str) -> Iterator[tuple[re.Match[str], int, int]]:
    """The day-and-month dates of the text: (match, day group, month group)."""
    for pattern, day_group, month_group in ((_DAY_MONTH_YEAR, 1, 2), (_MONTH_DAY_YEAR, 2, 1)):
        for match in pattern.finditer(text):
            if _is_date(match):
                yield match, day_group, month_group


def parse_ranges(text: str, now: datetime) -> list[DateRange]:
    """Every date range the text names; empty when it names none."""
    lowered = text.lower()
    ranges: list[DateRange] = []
    today = now.date()
    for phrase, (back, until) in _RELATIVE.items():
        if phrase in lowered:
            ranges.append(DateRange(today - timedelta(days=back), today - timedelta(days=until)))
    consumed: list[tuple[int, int]] = []
    for match in _ISO.finditer(text):
        day = _safe_date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        if day:
            ranges.append(DateRange(day, day))
            consumed.append(match.span())
    named_year = _named_year(text)
    for match, day_group, month_group in _days(text):
        found = _day_range(match.group(3) or named_year, MONTHS[match.group(month_group).lower()[:3]],
                           int(match.group(day_group)))
        if found:
            ranges.append(found)
            consumed.append(match.span())
    for match in _MONTH_YEAR.finditer(text):
        ranges.append(_month_range(int(match.group(2)), MONTHS[match.group(1).lower()[:3]]))
        consumed.append(match.span())
    for match in _MONTH_ONLY.finditer(text):
        if not any(a <= match.start(1) < b for a, b in consumed):
            month = _month_range(2001, MONTHS[match.group(1).lower()[:3]])
            ranges.append(DateRange(month.start, month.end, any_year=True))
    for match in _SEASON.finditer(text):
        first, last = _SEASONS[match.group(1).lower()]
        end = _month_range(2001 + (last < first), last).end
        ranges.append(DateRange(date(2001, first, 1), end, any_year=True))
    for match in _LED_YEAR.finditer(text):
        if not any(a <= match.start(1) < b for a, b in consumed):
            year = int(match.group(1))
            ranges.append(DateRange(date(year, 1, 1), date(year, 12, 31)))
    return ranges


def to_date(stamp: str | None) -> date | None:
    """The date of an ISO timestamp (our stored form), or None."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp[:19]).date()
    except ValueError:
        return None


# A calendar date and the preposition that leads to it ("on 1 February, 2023", "in May 2023").
_LEADING = re.compile(r"\b(?:on|in|of|by|during|since|before|after|until|as of|between|and|from)\s*$", re.I)


def without_dates(text: str) -> str:
    """The text with its calendar dates left out, for matching by meaning: what the question is
    about, not when (the dates are matched against the memory's own dates instead). Relative
    words ("last weekend", "yesterday") stay: people say them in the turns themselves."""
    spans = [m.span() for pattern in (_ISO, _MONTH_YEAR) for m in pattern.finditer(text)]
    spans += [m.span(1) for m in _LED_YEAR.finditer(text)]  # the preposition goes with it below
    spans += [m.span() for m, _, _ in _days(text)]
    spans.sort()
    if not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        if start < at:  # overlapping matches of the same date
            at = max(at, end)
            continue
        parts.append(_LEADING.sub("", text[at:start]))
        at = end
    parts.append(text[at:])
    kept = " ".join(" ".join(parts).split())
    return re.sub(r"\s+([,?.!])", r"\1", kept).strip(" ,") or text
