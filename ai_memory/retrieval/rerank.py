"""The local reranker: zero-LLM features over the fused candidates, combined by fixed weights.

Features, each in [0, 1]: the fused rank, the best matching turn's text and vector scores,
late-interaction scores (each query word's best match among a turn's word pieces) of the
session's best turns and of its other turns the turn streams reached, query-term coverage and
proximity in the best passage, exact phrases, entity overlap, agreement between time
expressions in the query and the page's dates, and whether the best turn can answer a "when"
or "how many" question (it says when, or gives a number). A page with no recorded turns is
scored as its own best turn.
The weights are set by hand from what each feature means, not fitted to any benchmark; the
one exception is the temporal weight, raised from 2 to 4 after dev runs (see WEIGHTS).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ai_memory.core.terms import terms, token_terms, words
from ai_memory.core.timeexpr import DateRange, asks_when, mentions_time, to_date

# Relative weights. Evidence at the level of single turns (their words, matched as written and
# matched by meaning piece by piece) and IDF-weighted coverage of the query carry the most;
# page-level text, vectors, entities and phrases support; the fused rank
# keeps every stream's vote. A query naming a time ("in June", "May 2023", "last week") makes
# the dates decisive: full agreement weighs about half of all the content evidence (4 of 7.75),
# so the session held on the named day usually beats one that only shares more of the words.
# (This one weight was raised from 2 after dev runs, trying 3, 4, 6 and 8, showed sessions on
# the named day losing on words.) Scores are divided by the sum of the content weights: near
# [0, 1], up to about 1.5 for a query naming a date.
WEIGHTS = {
    "turn_text": 1.0, "token_match": 1.0, "session_tokens": 1.0, "coverage": 1.0, "page_text": 0.5,
    "turn_vector": 0.5, "chunk_vector": 0.5, "entity_score": 0.5, "phrase": 0.5, "rrf": 0.5, "proximity": 0.25,
    "answer_type": 0.5,
}
TEMPORAL_WEIGHT = 4.0
_TOTAL = sum(WEIGHTS.values())
_ASKS_QUANTITY = re.compile(r"^\s*how\s+(?:many|much|long|often|old|far)\b", re.I)
# A number, with or without a unit on it ("3km", "10 min"), or a frequency; not "one" or
# "once" alone, which prose uses for everything, and not the digits of a date, a version or a
# reference ("2023-05-08", "v1.2", "#123").
_QUANTITY = re.compile(r"(?<![\w#./-])\d+(?:[.,]\d+)?(?![\d/-])(?=[a-z]{1,3}\b|[^\w.]|\.(?!\d)|$)"
                       r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                       r"hundred|thousand|dozen|couple|twice|once\s+(?:a|an|per|every)|daily|weekly|monthly|"
                       r"yearly|every\s+(?:day|week|month|year|morning|evening|night))\b", re.I)


@lru_cache(maxsize=4)  # coverage, proximity and phrase read one candidate's passage in a row
def _terms(text: str) -> tuple[str, ...]:
    return tuple(terms(text[:100_000]))


def coverage(query: list[str], text: str, idf: dict[str, float] | None = None) -> float:
    """Share of the query's terms present in the text, each weighted by its rarity (IDF)."""
    if not query:
        return 0.0
    found = set(_terms(text))
    weights = [(idf or {}).get(t, 1.0) for t in query]
    total = sum(weights) or 1.0
    return sum(w for t, w in zip(query, weights) if t in found) / total


def proximity(query: list[str], text: str) -> float:
    """1/(1 + span/8) for the shortest window holding two or more distinct query terms."""
    wanted = set(query)
    if len(wanted) < 2:
        return 0.0
    best = None
    last_seen: dict[str, int] = {}
    for i, term in enumerate(_terms(text)):
        if term not in wanted:
            continue
        last_seen[term] = i
        if len(last_seen) >= 2:
            span = i - min(last_seen.values())
            best = span if best is None else min(best, span)
    return 0.0 if best is None else 1.0 / (1.0 + best / 8.0)


@lru_cache(maxsize=4)
def _heads(text: str) -> tuple[str, ...]:
    """Each word's first term (an identifier whole, a word's stem): the text word by word."""
    return tuple(token_terms(w)[0] for w in words(text[:100_000]))


def phrase(query_words: list[str], text: str) -> float:
    """Share of the query's consecutive word pairs that stand side by side in the text (words
    compared by their first term: a stem, or an identifier whole)."""
    heads = [token_terms(w)[0] for w in query_words]
    if len(heads) < 2:
        return 0.0
    seen = _heads(text)
    pairs = set(zip(seen, seen[1:]))
    wanted = list(zip(heads, heads[1:]))
    return sum(1 for p in wanted if p in pairs) / len(wanted)


def answer_type(question: str, text: Callable[[], str]) -> float:
    """1 when the question asks "when" and the text says when ("last week", "3 May", "2023"), or
    asks "how many / much / long / often / old / far" and the text gives a number or a
    frequency; else 0.
    A passage that could answer the question beats one that only shares its topic. ``text`` is
    read only for such a question."""
    if asks_when(question):
        return 1.0 if mentions_time(text()) else 0.0
    if _ASKS_QUANTITY.search(question):
        return 1.0 if _QUANTITY.search(text()) else 0.0
    return 0.0


def temporal(ranges: list[DateRange], created: str | None, updated: str | None) -> float:
    if not ranges:
        return 0.0
    days = [d for d in (to_date(created), to_date(updated)) if d]
    if not days:
        return 0.0
    distance = min(r.distance_days(d) for r in ranges for d in days)
    return 1.0 / (1.0 + distance / 7.0)


def normalize(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if hi - lo < 1e-9:
        return {k: 1.0 for k in values}
    return {k: (v - lo) / (hi - lo) for k, v in values.items()}


def combine(features: dict[str, float], authority: float) -> float:
    base = sum(WEIGHTS[name] * features.get(name, 0.0) for name in WEIGHTS)
    return (authority * base + TEMPORAL_WEIGHT * features.get("temporal", 0.0)) / _TOTAL


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
