"""How likely a hit is to answer the query, on a scale that does not depend on the other hits.

A hit's score ranks it among this search's candidates: most of its features are fractions of the
best candidate's, so the best hit of a search about something memory never held scores much as
the best hit of one it holds, and a memory of four pages scores differently from one of four
thousand. Prompt recall must tell the two apart: it speaks only when sure. This is the estimated
probability that a hit answers, from what is absolute about it:

- coverage: the share of the query's terms, by rarity, in the hit's best passage;
- title: the same share in its title (a session's first request);
- phrase: the share of the query's word pairs standing side by side in the passage;
- meaning: the cosine of the query with the page's best chunk or best turn, as the vector streams
  give it (a turn's corrected for hubness), not rescaled among the candidates, when the model is
  loaded;
- written: whether the page is a written one (a decision, a rule, a note) rather than a session
  with recorded turns:
  its few words hold fewer of the query's than a session's many turns do, for the same answer,
  and what the project wrote down is what it holds to.

It is a logistic model, fitted once on the coding-history development set (its questions with
their sessions, and structured memories written over them, against another project's prompts:
``benchmarks/recall_calibration.py``) and kept as these numbers; without the model (loading, or turned off) the words-only fit
stands in. docs/guides/search.md ("Prompt recall") says how it was fitted and what each threshold
gave.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Fit:
    coverage: float
    title: float
    phrase: float
    meaning: float
    written: float
    intercept: float


# benchmarks/recall_calibration.py prints these from what benchmarks/prompt_recall.py --study writes.
WITH_MEANING = Fit(coverage=1.57, title=1.31, phrase=0.95, meaning=1.82, written=0.57, intercept=-3.79)
WORDS_ONLY = Fit(coverage=1.85, title=1.52, phrase=1.10, meaning=0.0, written=0.45, intercept=-2.68)
MEANING_STREAMS = ("vectors", "turns_vectors")  # their scores are cosines (turns': corrected for hubness)


def confidence(coverage: float, title: float, phrase: float, meaning: float | None, written: bool) -> float:
    """The probability that the hit answers; ``meaning`` None when no vector stream ran."""
    fit = WORDS_ONLY if meaning is None else WITH_MEANING
    z = (fit.intercept + fit.coverage * coverage + fit.title * title + fit.phrase * phrase
         + fit.meaning * (meaning or 0.0) + fit.written * written)
    return 1.0 / (1.0 + math.exp(-z))


def meaning_of(found: list[tuple[str, int, float, float]], measured: bool) -> float | None:
    """The best cosine the vector streams gave a candidate (``Fused.found``: stream, rank, share,
    score), 0 when they ran and did not find it; None when they did not run."""
    if not measured:
        return None
    return max((score for name, _, _, score in found if name in MEANING_STREAMS), default=0.0)
