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
    ranks: dict[str, dict[str, float]] = field(default_factory=dict)


def fuse(streams: list[Stream]) -> list[Fused]:
    """Sum of 1/(k + rank) over the streams that found each page, best first."""
    table: dict[int, Fused] = {}
    for stream in streams:
        for rank, page_id in enumerate(stream.ranked, start=1):
            entry = table.setdefault(page_id, Fused(page_id, 0.0))
            contribution = 1.0 / (RRF_K + rank)
            entry.rrf += contribution
            entry.ranks[stream.name] = {"rank": rank, "rrf": round(contribution, 6),
                                        "score": round(stream.scores[page_id], 6)}
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
