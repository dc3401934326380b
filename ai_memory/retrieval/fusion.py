"""Reciprocal-rank fusion across streams, and the bounded authority multiplier."""

from __future__ import annotations

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


def fuse(streams: list[Stream]) -> list[Fused]:
    """Sum of 1/(k + rank) over the streams that found each page, best first. What each stream
    said is kept as it is and put in words only for ``explain``: a search fuses a few hundred
    pages, and rounding every number of every one cost more than the fusion."""
    table: dict[int, Fused] = {}
    for stream in streams:
        scores = stream.scores
        for rank, page_id in enumerate(stream.ranked, start=1):
            entry = table.get(page_id)
            if entry is None:
                entry = table[page_id] = Fused(page_id, 0.0)
            contribution = 1.0 / (RRF_K + rank)
            entry.rrf += contribution
            entry.found.append((stream.name, rank, contribution, scores[page_id]))
    return sorted(table.values(), key=lambda f: -f.rrf)


def authority(row: dict[str, Any]) -> float:
    """Type, pinning, supersession and feedback (salience, within ±20 %), bounded to [0.5, 1.3]."""
    value = TYPE_AUTHORITY.get(row.get("type", ""), 1.0) * authority_factor(row.get("salience"))
    if row.get("pinned"):
        value *= 1.15
    if row.get("superseded_by"):
        value *= 0.5
    return max(MIN_AUTHORITY, min(MAX_AUTHORITY, value))


def top_ids(streams: list[Stream], n: int) -> list[int]:
    """The n best pages by fused rank (the graph stream's seeds)."""
    return [f.page_id for f in fuse(streams)[:n]]
