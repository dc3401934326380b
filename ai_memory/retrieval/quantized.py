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

Given a directory, on Linux, the int8 codes (nine tenths of a row) are not kept in the
process's own memory: they are written to an unnamed file there (``CodeFile``) and read
through a shared map whose pages are handed back (``MADV_DONTNEED``) after each read of a
search's candidates. They stay in the kernel's page cache, clean once written back, which the
kernel reclaims under memory pressure instead of swapping (a search then reads its
candidates from disk), instead of the daemon's anonymous memory: about 220 MB at 100,000
pages. While a read runs (~0.1 ms a matrix), the kernel maps the cached pages around each
one too ("fault-around"), so the process's RSS briefly counts most of the file: pages of the
page cache, not memory allocated. Elsewhere (macOS: ``MADV_DONTNEED`` does not unmap) the
codes stay in memory. Where no file can be written (an unwritable directory, a disk that
would be left with less than ``DISK_FREE_MIN_BYTES``), they stay in memory too, until the
matrix is built again (a restart, a reindex).
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import sys
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ai_memory.datadir import DISK_FREE_MIN_BYTES

log = logging.getLogger(__name__)

CANDIDATES = 8       # rows kept by the sign bits, per row asked for
MIN_CANDIDATES = 2048
COPY_ROWS = 32_768   # rows copied at a time from one code file to another
QUANTIZE_ROWS = 4096  # rows quantized at a time (their float32 temporaries: 6 MB)
# Only where handing the pages back unmaps them does a code file take the codes out of memory.
FILES_FREE_MEMORY = sys.platform.startswith("linux")


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


class CodeFile:
    """Rows of int8 codes in a file without a name in ``directory`` (on Linux it never has one;
    it is freed once the file and every map of it are closed, or the process ends however it
    ends), only ever appended to, and read through maps."""

    def __init__(self, directory: Path, dim: int) -> None:
        self._file = tempfile.TemporaryFile(dir=directory, prefix="codes-", buffering=0)
        self._close = weakref.finalize(self, self._file.close)
        self._lock = threading.Lock()
        self.directory, self.dim = directory, dim
        self.rows = 0  # rows claimed so far: written, or being written

    def append(self, at: int, codes: np.ndarray) -> bool:
        """``codes`` written as rows ``at`` onwards if the file ends at ``at``; False if rows
        follow (written for another instance, which may be mapping them: never written over).
        OSError if the disk is (nearly) full or the write fails."""
        data = np.ascontiguousarray(codes, dtype=np.int8).data.cast("B")
        disk = os.fstatvfs(self._file.fileno())
        if disk.f_bavail * disk.f_frsize < DISK_FREE_MIN_BYTES + len(data):
            raise OSError(errno.ENOSPC, "the disk would be left with too little free space")
        with self._lock:
            if self.rows != at:
                return False
            self.rows = at + len(codes)
        offset = at * self.dim
        while data:
            done = os.pwrite(self._file.fileno(), data, offset)
            data, offset = data[done:], offset + done
        return True

    def mapped(self, rows: int) -> tuple[np.ndarray, mmap.mmap | None]:
        """The first ``rows`` rows, as an array over a read-only shared map of the file."""
        if not rows:
            return np.zeros((0, self.dim), dtype=np.int8), None
        view = mmap.mmap(self._file.fileno(), rows * self.dim, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
        return np.frombuffer(view, dtype=np.int8).reshape(rows, self.dim), view


def _quantized(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sign bits, int8 codes and scales of float32 rows, QUANTIZE_ROWS at a time: over a whole
    matrix at once, the float32 temporaries came to twice its size (96 MB beside the 48 MB
    float32 matrix a growing memory is quantized from)."""
    vectors = np.asarray(vectors, dtype=np.float32)  # (n, dim)
    codes = np.empty(vectors.shape, dtype=np.int8)
    scales = np.empty(len(vectors), dtype=np.float32)
    for start in range(0, len(vectors), QUANTIZE_ROWS):
        part = vectors[start:start + QUANTIZE_ROWS]
        peak = np.abs(part).max(axis=1)
        scale = scales[start:start + len(part)]
        scale[:] = np.where(peak > 0, peak / 127.0, 1.0)
        scaled = part / scale[:, None]
        codes[start:start + len(part)] = np.rint(scaled, out=scaled)
    return _signs(vectors), codes, scales


@dataclass(frozen=True)
class QuantizedRows:
    bits: np.ndarray    # (words, n) sign bits
    codes: np.ndarray   # (n, dim) int8, in memory or over a map of ``file``
    scales: np.ndarray  # (n,) float32
    file: CodeFile | None = field(default=None, compare=False, repr=False)
    view: mmap.mmap | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, vectors: np.ndarray, directory: Path | None = None) -> "QuantizedRows":
        """``vectors`` quantized; with a ``directory`` (on Linux), their codes kept in a file
        there, or in memory where no file can be written."""
        bits, codes, scales = _quantized(vectors)
        if directory is None or not FILES_FREE_MEMORY:
            return cls(bits, codes, scales)
        try:
            file = CodeFile(directory, codes.shape[1])
            file.append(0, codes)
            return cls._over(file, bits, scales)
        except OSError as exc:
            log.warning("vector codes kept in memory: no file in %s (%s)", directory, exc)
            return cls(bits, codes, scales)

    @classmethod
    def _over(cls, file: CodeFile, bits: np.ndarray, scales: np.ndarray) -> "QuantizedRows":
        codes, view = file.mapped(len(scales))
        return cls(bits, codes, scales, file, view)

    def __len__(self) -> int:
        return len(self.scales)

    @property
    def shape(self) -> tuple[int, int]:
        return self.codes.shape

    @property
    def nbytes(self) -> int:
        """What the process holds (codes in a file are the page cache's)."""
        return self.bits.nbytes + self.scales.nbytes + (0 if self.file else self.codes.nbytes)

    def _codes_of(self, rows: np.ndarray) -> np.ndarray:
        """A copy of these rows' codes; the map's pages are handed back once they are read."""
        codes: np.ndarray = self.codes[rows]
        self._let_go()
        return codes

    def _let_go(self) -> None:
        """The map's pages handed back. (A search on another thread reading the same map
        meanwhile only reads its pages again.)"""
        if self.view is not None:
            self.view.madvise(mmap.MADV_DONTNEED)

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        """The rows as float32 (from their int8 codes)."""
        values: np.ndarray = self._codes_of(rows).astype(np.float32) * self.scales[rows, None]
        return values

    def appended(self, vectors: np.ndarray) -> "QuantizedRows":
        bits, codes, scales = _quantized(vectors)
        bits, scales = np.concatenate([self.bits, bits], axis=1), np.concatenate([self.scales, scales])
        if self.file is not None:
            try:
                # Normally this instance shows the whole file. Rows after it (written for another
                # instance: appended to twice, or a load that failed half way) are left as they
                # are, and the rows copied to a new file.
                file = self.file
                if not file.append(len(self), codes):
                    file = self._copied(np.arange(len(self)))
                    file.append(len(self), codes)
                return QuantizedRows._over(file, bits, scales)
            except OSError as exc:
                log.warning("vector codes kept in memory until the vectors are loaded again: %s", exc)
        return QuantizedRows(bits, self._with_codes_in_memory(codes), scales)

    def subset(self, keep: np.ndarray) -> "QuantizedRows":
        if self.file is not None:
            try:
                return QuantizedRows._over(self._copied(np.flatnonzero(keep)), self.bits[:, keep], self.scales[keep])
            except OSError as exc:
                log.warning("vector codes kept in memory until the vectors are loaded again: %s", exc)
        return QuantizedRows(self.bits[:, keep], self._codes_of(np.flatnonzero(keep)), self.scales[keep])

    def _with_codes_in_memory(self, more: np.ndarray) -> np.ndarray:
        codes = np.concatenate([self.codes, more])
        self._let_go()
        return codes

    def _copied(self, rows: np.ndarray) -> CodeFile:
        """A new code file of these rows' codes, copied a part at a time."""
        assert self.file is not None
        file = CodeFile(self.file.directory, self.file.dim)
        for start in range(0, len(rows), COPY_ROWS):
            file.append(file.rows, self._codes_of(rows[start:start + COPY_ROWS]))
        return file

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
        sims = (self._codes_of(rows) @ query.astype(np.float32)) * self.scales[rows]
        best = np.argsort(-sims, kind="stable")[:n]
        return rows[best], sims[best].astype(np.float32)
