"""The reranker's measures of a passage and a page, no LLM: query-term coverage and phrases
in the best passage (read through ``core.terms``, as the index reads it), agreement
of the query's dates with the page's, whether the best turn can answer a "when" or "how many"
question, min-max scaling, and a written page scored as its own turn. Which of them count
and how much is the registry's (``features``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from operator import itemgetter

from ai_memory.core.terms import stem, token_terms, words
from ai_memory.core.tool_text import edit_sides
from ai_memory.core.timeexpr import DateRange, asks_when, mentions_time, to_date

_ASKS_QUANTITY = re.compile(r"^\s*how\s+(?:many|much|long|often|old|far)\b", re.I)
_ASKS_WHY = re.compile(r"^\s*(?:why\b|how\s+come\b|what\s+(?:was|is|were)\s+the\s+reasons?\b)", re.I)
# A passage that gives a reason: "because", "so that", "since we", "to avoid", ...
_REASON = re.compile(r"\b(?:because|so\s+that|since\s+(?:we|it|the|this|that|they)|due\s+to|the\s+reason|"
                     r"in\s+order\s+to|to\s+avoid|otherwise|as\s+a\s+result|which\s+(?:would|means))\b", re.I)
# A number, with or without a unit on it ("3km", "10 min"), or a frequency; not "one" or
# "once" alone, which prose uses for everything, and not the digits of a date, a version or a
# reference ("2023-05-08", "v1.2", "#123").
_QUANTITY = re.compile(r"(?<![\w#./-])\d+(?:[.,]\d+)?(?![\d/-])(?=[a-z]{1,3}\b|[^\w.]|\.(?!\d)|$)"
                       r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                       r"hundred|thousand|dozen|couple|twice|once\s+(?:a|an|per|every)|daily|weekly|monthly|"
                       r"yearly|every\s+(?:day|week|month|year|morning|evening|night))\b", re.I)


PASSAGE_CHARS = 8_000  # coverage and phrase read this much of a passage (its texts joined by a line break)
Passage = tuple[str, ...]  # a candidate's best turns with their neighbours, or a page's title, summary and body


@dataclass(frozen=True)
class _Read:
    """What the features look up in one text: its terms, the pairs of words standing side by
    side (each word by its first term: a stem, or an identifier whole), and its first and last
    word's, which pair with the texts around it."""

    terms: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    first: str | None
    last: str | None


class _Readings:
    """The readings of the texts read last, up to a budget of characters, least recently used
    out first. The same turns and pages come back as candidates search after search, in other
    passages: each text is read once, a passage is made of their readings. A reading takes
    about 16 bytes a character of its text, and most texts are a few hundred characters, so the
    budget is in characters (a count of entries would hold either too few short turns or too
    many long edits)."""

    def __init__(self, chars: int) -> None:
        self._budget, self._chars = chars, 0
        self._found: OrderedDict[str, _Read] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, text: str) -> _Read:
        with self._lock:
            found = self._found.get(text)
            if found is not None:
                self._found.move_to_end(text)
                return found
        found = _read(text)
        with self._lock:
            if text not in self._found:
                self._found[text] = found
                self._chars += len(text)
                while self._chars > self._budget and len(self._found) > 1:
                    old, _ = self._found.popitem(last=False)
                    self._chars -= len(old)
        return found


READ_CACHE_CHARS = 400_000  # about 6 MB of readings
_READINGS = _Readings(READ_CACHE_CHARS)


def _read(text: str) -> _Read:
    """Read line by line: no word runs across a line break, and the lines of turns and page
    bodies come back in text after text."""
    found = [terms for line in text.split("\n") for terms in _line_terms(line)]
    heads = tuple(map(itemgetter(0), found))
    return _Read(frozenset(chain.from_iterable(found)), frozenset(zip(heads, heads[1:])),
                 heads[0] if heads else None, heads[-1] if heads else None)


@dataclass(frozen=True)
class _PassageRead:
    """A passage's first ``chars`` characters as its texts read them (joined by line breaks),
    never merged into one set: a search asks of each candidate only a few dozen terms and pairs,
    and the union of a coding passage's terms cost more than every question asked of it."""

    reads: tuple[_Read, ...]
    joins: frozenset[tuple[str, str]]  # one text's last word beside the next one's first

    def has(self, term: str) -> bool:
        return any(term in read.terms for read in self.reads)

    def side_by_side(self, pair: tuple[str, str]) -> bool:
        return pair in self.joins or any(pair in read.pairs for read in self.reads)


@lru_cache(maxsize=64)  # coverage and phrase read the same candidate's passage in a row
def _analysed(passage: Passage, chars: int = PASSAGE_CHARS) -> _PassageRead:
    reads: list[_Read] = []
    joins: set[tuple[str, str]] = set()
    room, last = chars, None
    for text in passage:
        if room <= 0:
            break
        read = _READINGS.read(text if len(text) <= room else text[:room])
        room -= len(text) + 1
        reads.append(read)
        if last is not None and read.first is not None:
            joins.add((last, read.first))
        last = read.last if read.last is not None else last
    return _PassageRead(tuple(reads), frozenset(joins))


@lru_cache(maxsize=8192)
def _line_terms(line: str) -> tuple[tuple[str, ...], ...]:
    """Each word's terms (``token_terms``), in order."""
    return tuple(map(token_terms, words(line)))


def coverage(query: list[str], passage: Passage, idf: dict[str, float] | None = None) -> float:
    """Share of the query's terms present in the passage, each weighted by its rarity (IDF)."""
    if not query:
        return 0.0
    read = _analysed(passage)
    weights = [(idf or {}).get(t, 1.0) for t in query]
    total = sum(weights) or 1.0
    return sum(w for t, w in zip(query, weights) if read.has(t)) / total


def phrase(query_words: list[str], passage: Passage) -> float:
    """Share of the query's consecutive word pairs that stand side by side in the passage (words
    compared by their first term: a stem, or an identifier whole)."""
    heads = [token_terms(w)[0] for w in query_words]
    if len(heads) < 2:
        return 0.0
    read = _analysed(passage)
    wanted = list(zip(heads, heads[1:]))
    return sum(1 for p in wanted if read.side_by_side(p)) / len(wanted)


def answer_type(question: str, text: Callable[[], str]) -> float:
    """1 when the question asks "when" and the text says when ("last week", "3 May", "2023"),
    asks "how many / much / long / often / old / far" and the text gives a number or a
    frequency, or asks "why" and the text gives a reason ("because", "so that"); else 0.
    A passage that could answer the question beats one that only shares its topic. ``text`` is
    read only for such a question."""
    if asks_when(question):
        return 1.0 if mentions_time(text()) else 0.0
    if _ASKS_QUANTITY.search(question):
        return 1.0 if _QUANTITY.search(text()) else 0.0
    if asks_why(question):
        return 1.0 if gives_reason(text()) else 0.0
    return 0.0


def asks_why(question: str) -> bool:
    """A question asking for a reason ("Why did we …", "What was the reason …")."""
    return _ASKS_WHY.search(question) is not None


def gives_reason(text: str) -> bool:
    return _REASON.search(text) is not None


def temporal(ranges: list[DateRange], created: str | None, updated: str | None) -> float:
    if not ranges:
        return 0.0
    days = [d for d in (to_date(created), to_date(updated)) if d]
    if not days:
        return 0.0
    distance = min(r.distance_days(d) for r in ranges for d in days)
    return 1.0 / (1.0 + distance / 7.0)


def normalize(values: dict[int, float], spread: float = 0.0) -> dict[int, float]:
    """Min-max scaling to [0, 1]: the best is 1, and the worst 0 unless the values lie within
    ``spread`` of each other, when they are scaled as if that far apart."""
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if hi - lo < 1e-9:
        return {k: 1.0 for k in values}
    span = max(hi - lo, spread)
    return {k: 1.0 - (hi - v) / span for k, v in values.items()}


def as_its_own_turn(features: dict[str, float], names: list[str]) -> dict[str, float]:
    """The turn-level features ``names`` of a written page (a decision, a gotcha), which has no
    recorded turns: the page is its own best turn. Its text match stands for a turn's text
    match, its chunks' match by meaning for a turn's vector, and the two together for matching
    word by word. Scoring them as zero instead would hand every close contest to the session
    the decision was talked over in, the reverse of what authority is for. Only the features
    measured for this search's sessions are filled in (none while the model loads)."""
    text, meaning = features.get("page_text", 0.0), features.get("chunk_vector", 0.0)
    own = {"turn_text": text, "turn_vector": meaning, "token_match": (text + meaning) / 2,
           "session_tokens": (text + meaning) / 2}
    return {**features, **{name: own[name] for name in names}}


# A query about something taken out or put in names it with one of these verbs (stemmed); not
# "support" or "stop", which ask as often about how things are ("does it support gzip").
_REMOVES = frozenset(map(stem, "remove drop delete deprecate disable strip eliminate revert".split()))
_ADDS = frozenset(map(stem, "add introduce start implement create enable restore".split()))
TAKEN_OUT, PUT_IN = 0, 1  # the sides of ``changed_terms``


def asked_change(query_words: list[str]) -> tuple[int, frozenset[str]] | None:
    """Whether the query asks about something the work took out ("removed", "dropped", "no
    longer") or put in ("added", "started"), by its first such word: the side asked for, and
    the terms that asked it (left out of what is looked for). None for any other query."""
    lowered = [w.lower() for w in query_words]
    for i, word in enumerate(lowered):
        if word == "no" and lowered[i + 1:i + 2] == ["longer"]:
            return TAKEN_OUT, _REMOVES | {"longer"}
        if stem(word) in _REMOVES:
            return TAKEN_OUT, _REMOVES
        if stem(word) in _ADDS:
            return PUT_IN, _ADDS
    return None


@lru_cache(maxsize=256)  # an edit's text is up to 14,000 characters: at most a few MB held
def changed_terms(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The terms an edit's text took out and put in (none for any other text): a term both
    sides hold was kept, whatever moved around it."""
    old, new = edit_sides(text)
    if not old and not new:
        return frozenset(), frozenset()
    before, after = _terms_of_lines(old), _terms_of_lines(new)
    return frozenset(before - after), frozenset(after - before)


def _terms_of_lines(text: str) -> set[str]:
    """A text's terms, read line by line as passages are (the same lines come back)."""
    return {term for line in text.split("\n") for terms in _line_terms(line) for term in terms}


def direction(query: list[str], query_words: list[str], passage: Passage, idf: dict[str, float] | None = None) -> float:
    """For a query about something removed or added, the share of its terms (each weighted by
    its rarity, the verb left out) that the passage's edits took out, or put in: "dropped
    Python 3.9" is the session whose edits deleted ``3.9``, not the one that only lists it.
    0 for any other query, or a passage without edits."""
    asked = asked_change(query_words)
    if asked is None:
        return 0.0
    side, asking = asked
    wanted = [t for t in query if t not in asking]
    changed = set().union(*(changed_terms(text)[side] for text in passage))
    if not wanted or not changed:
        return 0.0
    weights = [(idf or {}).get(t, 1.0) for t in wanted]
    return sum(w for t, w in zip(wanted, weights) if t in changed) / (sum(weights) or 1.0)
