"""Reciprocal-rank fusion across streams, and the bounded authority multiplier."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.retention import authority_factor
from ai_memory.retrieval.streams import Stream

RRF_K = 60
# Maintained knowledge edges out episodic sessions in close contests; never by a landslide.
TYPE_AUTHORITY = {
    "Rule": 1.15, "Decision": 1.15, "Procedure": 1.12, "Gotcha": 1.12, "Fact": 1.08, "Preference": 1.08,
    "Concept": 1.05, "Note": 1.0, "Session Summary": 1.0,
}
MIN_AUTHORITY, MAX_AUTHORITY = 0.5, 1.3


@dataclass
class Fused:
    page_id: int
    rrf: float
    found: list[tuple[str, int, float, float]] = field(default_factory=list)  # (stream, rank, rrf, score)

    @property
    def ranks(self) -> dict[str, dict[str, float]]:
        """Each stream's rank, share of the fused score and own score (for ``explain``)."""
        return {name: {"rank": rank, "rrf": round(part, 6), "score": round(score, 6)}
                for name, rank, part, score in self.found}


# The turn streams find recorded sessions only. A page without recorded turns (a decision, a
# rule, a note) is its own turn: where a page stream found it, the turn stream of the same kind
# counts it found too, at half weight (its text is one piece of evidence, where a session's page
# and turns are two). Without, a decision stating the answer word for word, found first by the
# page streams, fused below dozens of sessions the four streams found and never reached the
# reranker; at full weight, short decisions about a neighbouring topic took first place from the
# session that answered more often than at half.
OWN_TURN = {"fts": "turns_fts", "vectors": "turns_vectors"}
OWN_TURN_WEIGHT = 0.5


def fuse(streams: list[Stream], own_turns: Collection[int] = ()) -> list[Fused]:
    """Sum of 1/(k + rank) over the streams that found each page, best first; ``own_turns``, the
    pages without recorded turns, counted by the turn streams where the page streams found them
    (``OWN_TURN``: only while the turn streams found anything). What each stream said is kept
    as it is and put in words only for ``explain``: a search fuses a few hundred pages, and
    rounding every number of every one cost more than the fusion."""
    table: dict[int, Fused] = {}
    running = {s.name for s in streams if s.ranked}
    for stream in streams:
        scores = stream.scores
        stand_in = OWN_TURN.get(stream.name) if own_turns else None
        stand_in = f"{stand_in} (as its own turn)" if stand_in in running else None
        for rank, page_id in enumerate(stream.ranked, start=1):
            entry = table.get(page_id)
            if entry is None:
                entry = table[page_id] = Fused(page_id, 0.0)
            contribution = 1.0 / (RRF_K + rank)
            entry.rrf += contribution
            entry.found.append((stream.name, rank, contribution, scores[page_id]))
            if stand_in is not None and page_id in own_turns:
                entry.rrf += contribution * OWN_TURN_WEIGHT
                entry.found.append((stand_in, rank, contribution * OWN_TURN_WEIGHT, scores[page_id]))
    return sorted(table.values(), key=lambda f: -f.rrf)


def authority(row: dict[str, Any]) -> float:
    """Type, pinning, supersession and feedback (salience, within ±20 %), bounded to [0.5, 1.3]."""
    value = TYPE_AUTHORITY.get(row.get("type", ""), 1.0) * authority_factor(row.get("salience"))
    if row.get("pinned"):
        value *= 1.15
    if row.get("superseded_by"):
        value *= 0.5
    return max(MIN_AUTHORITY, min(MAX_AUTHORITY, value))


def top_ids(streams: list[Stream], n: int, own_turns: Collection[int] = ()) -> list[int]:
    """The n best pages by fused rank (the graph stream's seeds)."""
    return [f.page_id for f in fuse(streams, own_turns)[:n]]
