"""A compact resident copy of many unit vectors, searched in two steps: sign bits, then int8.

Held as float32, a memory of 100,000 pages is several hundred thousand vectors of 1.5 KB each:
hundreds of MB resident in the searching process, and a brute-force product that reads all of
it for every search (memory-bound: about 0.6 us a row on this 2-core machine once the matrix
no longer fits in the cache). Here each row is kept twice, small:

- its **sign bits** (one bit a dimension, 48 bytes at 384): the Hamming distance between the
  query's signs and a row's estimates their angle. It ranks every row (XOR and popcount, an
  order of magnitude faster than the float product) and keeps ``CANDIDATES`` times the rows
  asked for, at least ``MIN_CANDIDATES``;
- its **int8 codes** with one float32 scale (row ~= scale * codes, 388 bytes): the candidates
  are scored by the cosine these give, within 2e-3 of the float32 cosine, and the best
  are returned with those scores.

So a row costs 436 bytes instead of 1,536, and what is found is the exact brute-force answer
except where the sign bits left a row out of the candidates or a near-tie swaps within the
int8 error: ``benchmarks/scale.py`` prints the recall against the exact search in the same run.
On 22,126 all-MiniLM-L6-v2 vectors of coding sessions (200 of them held out as queries), the
top 10 were found with recall 0.993 and the top 300 with 0.994.
Instances never change: an append or a removal builds a new one, so a search holding the old
one is never disturbed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CANDIDATES = 8       # rows kept by the sign bits, per row asked for
MIN_CANDIDATES = 2048


def as_words(packed: np.ndarray) -> np.ndarray:
    """Packed sign bits, a row each, as whole 64-bit words when the width allows (six at 384
    dimensions), else as bytes."""
    return packed.view(np.uint64) if packed.shape[-1] % 8 == 0 else packed


def _signs(vectors: np.ndarray) -> np.ndarray:
    """Sign bits as (words, rows): one contiguous array per word, so a distance is a few XORs
    and popcounts over whole columns (3-5x faster than a reduction along each row)."""
    return np.ascontiguousarray(as_words(np.packbits(np.atleast_2d(vectors) > 0, axis=-1)).T)


def differing_bits(columns: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """How many bits of each row differ from ``sign``: ``columns`` is (words, rows) as
    ``_signs`` makes them, ``sign`` one row's words."""
    distance = np.zeros(columns.shape[1], dtype=np.uint16)  # at most the number of dimensions
    for word, bits in zip(sign, columns):
        distance += np.bitwise_count(bits ^ word)
    return distance


@dataclass(frozen=True)
class QuantizedRows:
    bits: np.ndarray    # (words, n) sign bits
    codes: np.ndarray   # (n, dim) int8
    scales: np.ndarray  # (n,) float32

    @classmethod
    def of(cls, vectors: np.ndarray) -> "QuantizedRows":
        vectors = np.asarray(vectors, dtype=np.float32)  # (n, dim)
        peak = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, dtype=np.float32)
        scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        codes = np.rint(vectors / scales[:, None]).astype(np.int8)
        return cls(_signs(vectors), codes, scales)

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape

    @property
    def nbytes(self) -> int:
        return self.bits.nbytes + self.codes.nbytes + self.scales.nbytes

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        """The rows as float32 (from their int8 codes)."""
        return self.codes[rows].astype(np.float32) * self.scales[rows, None]

    def appended(self, vectors: np.ndarray) -> "QuantizedRows":
        more = QuantizedRows.of(vectors)
        return QuantizedRows(np.concatenate([self.bits, more.bits], axis=1), np.concatenate([self.codes, more.codes]),
                             np.concatenate([self.scales, more.scales]))

    def subset(self, keep: np.ndarray) -> "QuantizedRows":
        return QuantizedRows(self.bits[:, keep], self.codes[keep], self.scales[keep])

    def nearest(self, query: np.ndarray, n: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """About the ``n`` rows nearest to the unit ``query`` among ``allowed`` (a boolean mask;
        None: all): their indices and cosines, best first."""
        if not len(self):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        distance = differing_bits(self.bits, _signs(query.astype(np.float32))[:, 0])
        if allowed is not None:
            distance[~allowed] = np.iinfo(np.uint16).max  # other projects never take a candidate's place
        want = max(n * CANDIDATES, MIN_CANDIDATES)
        rows = np.argpartition(distance, want)[:want] if want < len(distance) else np.arange(len(distance))
        if allowed is not None:
            rows = rows[allowed[rows]]
        rows.sort()  # read in memory order
        sims = (self.codes[rows] @ query.astype(np.float32)) * self.scales[rows]
        best = np.argsort(-sims, kind="stable")[:n]
        return rows[best], sims[best].astype(np.float32)
