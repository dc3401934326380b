"""Hubness reduction for turn vectors: a turn that is near everything is evidence of nothing.

In a high-dimensional embedding space some vectors are among the nearest neighbours of a great
many others ("hubs"). Generic turns ("That's awesome, thanks for sharing!") sit close to every
question and crowd the top of a plain cosine ranking. Cross-domain similarity local scaling
(CSLS, Conneau et al. 2018) corrects a match by how crowded the matched vector's neighbourhood is:

    score(q, d) = cos(q, d) - 1/2 * (density(d) - typical density)

where density(d) is d's mean cosine to its nearest neighbours. (CSLS also subtracts the
query's own density, which changes no ranking.) The weight 1/2 is CSLS's own.

Density is measured against a fixed sample of the matrix, not all of it, and only for the
rows a search reaches; a value once computed is kept. The sample is drawn again each time the
matrix doubles, so it follows what the memory holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai_memory.retrieval.quantized import QuantizedRows

Rows = np.ndarray | QuantizedRows  # unit rows, float32 or quantized: indexed by row numbers

WEIGHT = 0.5
SAMPLE = 512
NEIGHBOURS = 5  # of a 512-row sample: about the 10 nearest of a thousand
MIN_REFERENCE = 32  # fewer rows say nothing about crowding: no correction
_SELF = 0.9999  # the row itself (or the same text again) is not its own neighbour


@dataclass(frozen=True)
class Densities:
    """Per-row neighbourhood density of one matrix (NaN until a search needs it)."""

    reference: np.ndarray  # (r, dim) rows sampled from the matrix
    values: np.ndarray     # (n,) float32
    typical: float         # mean density of the reference rows themselves
    drawn_at: int          # the 2^k oldest rows the reference was drawn from


def _density(rows: np.ndarray, reference: np.ndarray) -> np.ndarray:
    if len(reference) < MIN_REFERENCE:
        return np.zeros(len(rows), dtype=np.float32)
    sims = rows @ reference.T
    sims[sims > _SELF] = -1.0
    nearest: np.ndarray = np.partition(sims, -NEIGHBOURS, axis=1)[:, -NEIGHBOURS:].mean(axis=1).astype(np.float32)
    return nearest


def _drawn(matrix: Rows, ids: np.ndarray) -> Densities:
    """The reference: up to SAMPLE rows spread evenly over the oldest 2^k rows by id (2^k the
    largest power of two the matrix holds). Every process holding the same rows draws the same
    reference, whatever order it loaded them in, so a query ranks alike wherever it runs."""
    n = len(matrix)
    size = 1 << (n.bit_length() - 1) if n else 0
    oldest = np.argsort(ids, kind="stable")[:size]
    picked = oldest[np.linspace(0, size - 1, min(SAMPLE, size)).astype(int)] if size else oldest
    reference = np.ascontiguousarray(matrix[np.sort(picked)])
    typical = float(_density(reference, reference).mean()) if len(reference) >= MIN_REFERENCE else 0.0
    return Densities(reference, np.full(n, np.nan, dtype=np.float32), typical, size)


def extended(current: Densities | None, matrix: Rows, ids: np.ndarray) -> Densities:
    """The densities of ``matrix`` (whose rows have these own ``ids``), which holds the rows
    ``current`` was made for and maybe more after them: the values known so far are kept,
    until the matrix holds twice the rows the reference was drawn from."""
    if current is None or len(matrix) >= 2 * max(current.drawn_at, 1) or len(matrix) < len(current.values):
        return _drawn(matrix, ids)
    added = len(matrix) - len(current.values)
    if not added:
        return current
    values = np.concatenate([current.values, np.full(added, np.nan, dtype=np.float32)])
    return Densities(current.reference, values, current.typical, current.drawn_at)


def adjusted(densities: Densities, matrix: Rows, rows: np.ndarray, sims: np.ndarray) -> np.ndarray:
    """``sims`` (the cosines of ``rows``) corrected for each row's density."""
    values = densities.values
    missing = rows[np.isnan(values[rows])]
    if len(missing):
        # Searches on other threads may fill the same places: with the same numbers.
        values[missing] = _density(matrix[missing], densities.reference)
    corrected: np.ndarray = sims - WEIGHT * (values[rows] - densities.typical)
    return corrected
