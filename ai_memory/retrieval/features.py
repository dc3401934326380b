"""The reranker's features: one registry of (name, weight, function, doc) that scoring,
``explain`` and the search guide's table (docs/guides/search.md) all read, so no weight lives anywhere else.

Each feature is a number in [0, 1] about one candidate, computed from what the search gathered
for it (``Candidate``). The score is

    (authority · Σ weight · feature  +  Σ weight · feature of the date features) / Σ weight

where the sum under the fraction bar is over the features scaled by authority: a date the query
names counts outside the authority multiplier, so a superseded page on the named day is still
on that day. Weights are set by what each feature measures, in two tiers: evidence about the
best turns (what they say, and what their edits took out or put in) and the query's coverage
1.0; the page as a whole, its title, phrases and the fused rank 0.5. The title says what a page is
about, and a session's what it was for (its first request): of two sessions that both touched
what a question names, the one that set out to change it is more often the answer than the one
that met it on the way. The names a page shares with the query (the entity stream) vote through
the fused rank only: as a feature of their own they lowered the ranking of coding sessions and
moved nothing on conversations. Nor is there a feature for how close the query's terms stand:
over a passage of several turns two of them stand side by side somewhere in most candidates
(over half of a coding search's top ten had the best value), what is left of it is the phrase
feature's, and without it both development sets ranked a little better. The ablation table in
the closing note of issue 21 (each feature removed in turn, on both development sets) shows
what each buys; a feature that bought nothing on either was removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.timeexpr import DateRange
from ai_memory.retrieval import rerank


@dataclass
class Candidate:
    """What a search knows about one candidate page when it is scored."""

    row: dict[str, Any]
    rrf: float                      # its fused score as a fraction of the best candidate's
    streams: dict[str, float]       # per stream, its score scaled over this search's candidates
    late: dict[str, float]          # late interaction: "best" turns, every "reached" turn
    passage: rerank.Passage         # its best turns with their neighbours, or the page's texts
    terms: list[str]                # the query's analysed terms
    words: list[str]                # the query's words as written
    idf: dict[str, float]
    ranges: list[DateRange]
    question: str
    answer_text: Callable[[], str] = field(default=lambda: "")


@dataclass(frozen=True)
class Feature:
    name: str
    weight: float
    value: Callable[[Candidate], float]
    doc: str
    by_authority: bool = True  # scaled by the page's authority (all but the dates)


FEATURES: tuple[Feature, ...] = (
    Feature("turn_text", 1.0, lambda c: c.streams.get("turns_fts", 0.0),
            "BM25 of the best matching turn (observation), as a fraction of the best candidate's"),
    Feature("token_match", 1.0, lambda c: c.late.get("best", 0.0),
            "late interaction: each query word matched to its closest word piece of the best turns"),
    Feature("session_tokens", 1.0, lambda c: c.late.get("reached", 0.0),
            "late interaction over every turn of the session the turn streams reached"),
    Feature("coverage", 1.0, lambda c: rerank.coverage(c.terms, c.passage, c.idf),
            "share of the query's terms in the best passage, each weighted by its rarity (IDF)"),
    Feature("turn_vector", 0.5, lambda c: c.streams.get("turns_vectors", 0.0),
            "cosine of the best turn, sentence or edit passage, corrected for hubness"),
    Feature("page_text", 0.5, lambda c: c.streams.get("fts", 0.0),
            "BM25 of the page (title, summary, body), as a fraction of the best candidate's"),
    Feature("chunk_vector", 0.5, lambda c: c.streams.get("vectors", 0.0),
            "cosine of the page's best chunk"),
    Feature("phrase", 0.5, lambda c: rerank.phrase(c.words, c.passage),
            "share of the query's consecutive word pairs found side by side in the passage"),
    Feature("title", 0.5, lambda c: rerank.coverage(c.terms, (c.row.get("title") or "",), c.idf),
            "share of the query's terms in the page's title (a session's is its first request), each weighted"
            " by its rarity (IDF)"),
    Feature("direction", 1.0, lambda c: rerank.direction(c.terms, c.words, c.passage, c.idf),
            "for a query about something removed or added, the share of its terms, by rarity, that the best"
            " turns' edits took out or put in"),
    Feature("rrf", 0.5, lambda c: c.rrf, "the fused rank: every stream's vote"),
    Feature("answer_type", 0.5, lambda c: rerank.answer_type(c.question, c.answer_text),
            'a "when" question and a best turn that says when, or "how many" and one that gives a number'),
)
# The words of a query and the dates it names are the two halves of what was asked: full
# agreement with a named date weighs as much as all the evidence about the words together
# (``direction`` is about what the work did, not where the words stand, and is 0 for most
# queries: a date question's balance does not depend on it).
LEXICAL = ("turn_text", "coverage", "page_text", "phrase", "title")
FEATURES += (Feature("temporal", sum(f.weight for f in FEATURES if f.name in LEXICAL),
                     lambda c: rerank.temporal(c.ranges, c.row.get("created"), c.row.get("updated")),
                     "agreement of the dates the query names with the page's dates (weighs as much as the"
                     " lexical features together)", by_authority=False),)


def without(names: Iterable[str], features: tuple[Feature, ...] = FEATURES) -> tuple[Feature, ...]:
    """The registry with the named features left out (for an ablation)."""
    drop = set(names)
    return tuple(f for f in features if f.name not in drop)


def combine(values: dict[str, float], authority: float, features: tuple[Feature, ...] = FEATURES) -> float:
    scaled = sum(f.weight * values.get(f.name, 0.0) for f in features if f.by_authority)
    dated = sum(f.weight * values.get(f.name, 0.0) for f in features if not f.by_authority)
    total = sum(f.weight for f in features if f.by_authority) or 1.0
    return (authority * scaled + dated) / total


def weights(features: tuple[Feature, ...] = FEATURES) -> dict[str, float]:
    return {f.name: f.weight for f in features}


FORMULA = "(authority * sum(weight * feature) + sum of the date features' weight * feature) / sum(weight)"
