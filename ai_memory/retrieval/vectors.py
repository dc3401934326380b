"""The vector stream: cosine over normalized vectors held in memory, exact while it is cheap.

Matrices are loaded from SQLite once and then kept in step: nothing is read while no other
connection has committed, a cheap signature notices new rows, and only those are read and
appended (observations and their sentences are only ever added). Page chunks are replaced when a
page changes, so the chunk matrix is matched against what the chunks are now, and rows of an
edited or removed page are dropped. Each change builds new arrays, so a search holding the old
ones is never disturbed.

A matrix of up to ``EXACT_ROWS`` rows is float32 and searched by brute force: exact, one
matrix-vector product of a few milliseconds (10,000 pages are about 30,000 chunks). A larger
one is held as ``quantized.QuantizedRows`` (sign bits to choose candidates, int8 codes to
score them: 436 bytes a row instead of 1,536, and about 4x faster at 300,000 rows; in the
daemon the codes are in a file, and 52 bytes a row are resident), whose
answer is the exact one but for rows the sign bits missed (recall printed by
``benchmarks/scale.py``) and near-ties within its 2e-3 error.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ai_memory.core.names import UNSORTED, project_name
from ai_memory.retrieval import hubness
from ai_memory.retrieval.quantized import QuantizedRows
from ai_memory.store import vector_rows
from ai_memory.store.cache_stamp import NO_STAMP, CacheStamp, stamp_and_version
from ai_memory.store.vector_rows import VectorTable

# Below this cosine, all-MiniLM-L6-v2 matches are noise (unrelated or made-up words score
# 0.1-0.25): a page found only that way is no evidence, and must not hide "nothing found".
MIN_SIMILARITY = 0.30

# Up to this many rows a matrix is float32 and searched exactly (48 MB at 384 dimensions).
# Beyond it, brute force is bound by memory bandwidth (tens of ms a product at 300,000 rows on
# this machine) and its float32 copy alone would take most of the daemon's memory budget.
EXACT_ROWS = 32_768
# A first load of a large memory is read and appended in batches of this many rows, so the rows
# read are never all held at once beside the matrix they become (a batch's rows and their
# vectors joined: ~25 MB).
LOAD_BATCH = 8192

@dataclass(frozen=True)
class _Source:
    table: VectorTable     # its rows (``store.vector_rows``); its MAX(rowid) (and COUNT(*)) tell that
                           # rows were added (or removed)
    sessions: bool         # rows are observations, grouped by session
    replaced: bool = False  # rows are deleted (a page edited or removed), never changed in place
    linked_later: bool = False  # rows wait for their vector: the oldest waiting, and how many, are read


_CHUNKS = _Source("chunks", sessions=False, replaced=True)
# An observation is linked to its vector (embed_hash) after it is stored, by the embedding job.
_OBSERVATIONS = _Source("observations", sessions=True, linked_later=True)
_SENTENCES = _Source("observation_sentences", sessions=True)


@dataclass
class _Matrix:
    keys: np.ndarray       # page id (chunks) or observation rowid (observations)
    groups: np.ndarray     # page id again, or the observation's session index
    matrix: np.ndarray | QuantizedRows  # (n, dim) unit rows: float32 up to EXACT_ROWS, then quantized
    projects: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))  # project code per row
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # own id per row
    alive: np.ndarray | None = None  # False for rows whose chunk was removed; None: all alive
    project_index: dict[str, int] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)
    session_index: dict[str, int] = field(default_factory=dict)
    # A byte per own id (chunk id, observation rowid, sentence id): 1 for a row loaded. Ids are
    # handed out in order, and rows only ever added (a chunk's id is never reused), so this is
    # about a byte a row: a set of a million ints held 60 MB.
    loaded: bytearray = field(default_factory=bytearray)
    last_own: int = 0      # highest chunk id / observation rowid loaded
    last_embedding: int = 0
    unlinked_from: int | None = None  # the oldest row not yet linked to a vector, at the last load
    signature: tuple[int | None, ...] = ()
    data_version: tuple[int, int] = (0, 0)  # (connection id, PRAGMA data_version) last checked
    stamp: CacheStamp = NO_STAMP  # of the database the rows were read from
    densities: hubness.Densities | None = None  # turn and sentence rows only


def single_threaded_blas() -> None:
    """Matrix products on the calling thread only, for the whole process. A search's products
    are matrix-vector ones over a few thousand rows, bound by memory (0.3 ms for 6,000 x 384):
    OpenBLAS splitting one over every core only adds a hand-off, and when the other core is busy
    (a second search, an embedding batch, another process) the product waits for a thread that
    is not running: 8.5 ms instead of 0.3 on this 2-core machine. Searches already run side by
    side on threads of their own."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def top_indices(sims: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n largest values, largest first: a partition, then a sort of only those
    (a full argsort of 30,000 similarities costs more than the product that made them)."""
    if n >= len(sims):
        return np.argsort(-sims)
    part = np.argpartition(-sims, n)[:n]
    return part[np.argsort(-sims[part])]


def _allowed(m: _Matrix, projects: Collection[str] | None) -> np.ndarray | None:
    """The rows a search may see: alive, and within ``projects`` (None: every row)."""
    allowed = m.alive
    if projects is not None:
        codes = [code for name, code in list(m.project_index.items()) if name in projects]
        inside = np.isin(m.projects, codes)
        allowed = inside if allowed is None else allowed & inside
    return allowed


def nearest(m: _Matrix, query: np.ndarray, n: int,
            projects: Collection[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` rows nearest to ``query`` that a search in ``projects`` may see, and their
    cosines, best first (fewer when the scope holds fewer). Masking before the top-k keeps other
    projects from taking the places of this one's matches (a masked row scores -1 here, below
    any match)."""
    allowed = _allowed(m, projects)
    if isinstance(m.matrix, QuantizedRows):
        return m.matrix.nearest(query, n, allowed)
    if allowed is not None and 2 * int(np.count_nonzero(allowed)) < len(allowed):
        # A scope holding few of the rows (one project of many): the product over those rows
        # only. Gathering them costs less than multiplying the rows the scope cannot see.
        inside = np.flatnonzero(allowed)
        sims = m.matrix[inside] @ query
        top = top_indices(sims, n)
        return inside[top], sims[top]
    sims = m.matrix @ query
    if allowed is not None:
        sims = np.where(allowed, sims, -1.0)
    rows = top_indices(sims, n)
    return rows, sims[rows]


def _union(known: bytearray, found: bytearray) -> bytearray:
    """The ids marked in either."""
    out = bytearray(max(len(known), len(found)))
    marks = np.frombuffer(out, dtype=np.uint8)
    marks[:len(found)] = np.frombuffer(found, dtype=np.uint8)
    marks[:len(known)] |= np.frombuffer(known, dtype=np.uint8)
    return out


class VectorIndex:
    """Cached matrices for chunk vectors and observation vectors of one model."""

    def __init__(self, model: str, dim: int, exact_rows: int = EXACT_ROWS, codes_dir: Path | None = None) -> None:
        """``codes_dir``: where a quantized matrix keeps its int8 codes, out of the process's
        memory (``quantized.CodeFile``); None: in memory."""
        self.model = model
        self.dim = dim
        self.exact_rows = exact_rows
        self.codes_dir = codes_dir
        self._lock = threading.Lock()
        self._chunks: _Matrix | None = None
        self._obs: _Matrix | None = None
        self._sentences: _Matrix | None = None

    def _empty(self) -> _Matrix:
        return _Matrix(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                       np.zeros((0, self.dim), dtype=np.float32))

    def _refresh(self, conn: sqlite3.Connection, current: _Matrix | None, source: _Source) -> _Matrix:
        # Another file (a reindex), or rows rewritten in place (a project renamed): read anew.
        stamp, data_version = stamp_and_version(conn)
        if current is not None and current.stamp != stamp:
            current = None
        # data_version changes only when another connection commits: while it stands still,
        # nothing can have changed and even the signature's queries are skipped.
        version = (id(conn), data_version)
        if current is not None and current.data_version == version:
            return current
        # Vectors, observations and sentences are only ever added: their highest rowid says all,
        # at no cost. Chunks are replaced when a page changes, so they are counted too, in a query
        # of its own: alone, a COUNT(*) is answered from the b-tree's cell counts, while asked
        # beside MAX(rowid) it walks every row of an index, and this runs after every write.
        emb = vector_rows.newest_vector(conn)
        newest = vector_rows.newest_row(conn, source.table)
        size = vector_rows.row_count(conn, source.table) if source.replaced else newest
        own = (newest, size)
        # Rows that were not linked to a vector at the last load may be linked now, to a vector
        # that is not new either (a text seen before): the oldest and the number of rows still
        # waiting tell, and the load reads again from the oldest of them.
        waiting = vector_rows.unlinked_observations(conn) if source.linked_later else (None, 0)
        unlinked = waiting[0]
        signature = (emb,) + tuple(own) + waiting
        if current is not None and current.signature == signature:
            current.data_version = version
            return current
        if current is None or (not source.replaced and (own[0] or 0) < current.last_own):
            current = self._empty()  # a first load, or rows gone that only a new file can lose
        start = current.last_own if current.unlinked_from is None else min(current.last_own,
                                                                          current.unlinked_from - 1)
        # A first load reads every linked row through the first range alone.
        vectors_from = current.last_embedding if current.signature else int(emb or 0)
        chunks_changed = source.replaced and current.signature[1:3] != tuple(own)
        rows = vector_rows.vector_rows(conn, source.table, self.model, start, vectors_from)
        current, found = self._load_new(current, rows, source.sessions, int(own[0] or 0))
        if found is not None:  # only now: a load that failed must be read again in full
            current.loaded = _union(current.loaded, found)
        if chunks_changed:  # some may be gone, whether their vectors were loaded or not yet
            current = self._without_removed(conn, current, source.table)
        current.signature = signature
        current.data_version = version
        current.stamp = stamp
        current.unlinked_from = int(unlinked) if unlinked is not None else None
        current.last_own = max(current.last_own, int(own[0] or 0))
        current.last_embedding = max(current.last_embedding, int(emb or 0))
        return current

    def _load_new(self, current: _Matrix, cursor: sqlite3.Cursor, sessions: bool,
                  newest: int) -> tuple[_Matrix, bytearray | None]:
        """The matrix with the cursor's rows not loaded yet appended (the two ranges of a load can
        both hold a row), and the ids it found (None: no row was new)."""
        known, found, batch, added = current.loaded, bytearray(newest + 1), [], 0
        for r in cursor:
            at = int(r[3])
            if at >= len(found):  # added after the signature was read
                found.extend(bytes(at + 1 - len(found)))
            if found[at] or (at < len(known) and known[at]):
                continue
            found[at], added = 1, added + 1
            batch.append(r)
            if len(batch) >= LOAD_BATCH:
                current, batch = self._append(current, batch, sessions), []
        if batch:
            current = self._append(current, batch, sessions)
        return current, found if added else None

    def _without_removed(self, conn: sqlite3.Connection, m: _Matrix, table: VectorTable) -> _Matrix:
        """Rows whose chunk is gone (a page edited or removed) stop matching. Chunk ids are never
        reused, so an id still in the table is still the same text of the same page. Dead rows
        are masked, and dropped once they are a quarter of the matrix."""
        live = np.fromiter(vector_rows.live_ids(conn, table), dtype=np.int64)
        alive = np.isin(m.ids, live)
        if alive.all():
            return replace(m, alive=None)
        if (~alive).sum() * 4 < len(alive):
            return replace(m, alive=alive)
        loaded = bytearray(m.loaded)  # a copy: the old matrix keeps its own
        np.frombuffer(loaded, dtype=np.uint8)[m.ids[~alive]] = 0
        matrix = m.matrix.subset(alive) if isinstance(m.matrix, QuantizedRows) else m.matrix[alive]
        return replace(m, loaded=loaded, keys=m.keys[alive], groups=m.groups[alive], matrix=matrix,
                       projects=m.projects[alive], ids=m.ids[alive], alive=None)

    def _append(self, m: _Matrix, rows: list[tuple[Any, ...]], sessions: bool) -> _Matrix:
        """A new matrix with the rows added: a search on another thread may still be reading
        the old one, whose arrays must stay as they were, all the same length."""
        keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        names = m.sessions
        if sessions:
            groups = np.fromiter((m.session_index.setdefault(r[1], len(m.session_index)) for r in rows),
                                 dtype=np.int64, count=len(rows))
            names = [""] * len(m.session_index)
            for name, i in m.session_index.items():
                names[i] = name
        else:
            groups = keys
        vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.dim)
        # Projects as the wiki names them ("Acme API" is acme-api), once here, not per search.
        projects = np.fromiter((m.project_index.setdefault(project_name(r[5]) or UNSORTED, len(m.project_index))
                                for r in rows),
                               dtype=np.int32, count=len(rows))
        ids = np.fromiter((r[3] for r in rows), dtype=np.int64, count=len(rows))
        alive = None if m.alive is None else np.concatenate([m.alive, np.ones(len(rows), dtype=bool)])
        matrix = self._grown(m.matrix, vectors)
        all_ids = np.concatenate([m.ids, ids])
        densities = hubness.extended(m.densities, matrix, all_ids) if sessions else None
        return replace(m, keys=np.concatenate([m.keys, keys]), groups=np.concatenate([m.groups, groups]),
                       matrix=matrix, projects=np.concatenate([m.projects, projects]),
                       ids=all_ids, alive=alive, sessions=names, densities=densities)

    def _grown(self, matrix: np.ndarray | QuantizedRows, vectors: np.ndarray) -> np.ndarray | QuantizedRows:
        if isinstance(matrix, QuantizedRows):
            return matrix.appended(vectors)
        if len(matrix) + len(vectors) > self.exact_rows:  # from here on, never float32 in full
            return QuantizedRows.of(matrix, self.codes_dir).appended(vectors)
        return np.vstack([matrix, vectors])

    def chunk_matrix(self, conn: sqlite3.Connection) -> _Matrix:
        with self._lock:
            self._chunks = self._refresh(conn, self._chunks, _CHUNKS)
            return self._chunks

    def observation_matrix(self, conn: sqlite3.Connection) -> _Matrix:
        with self._lock:
            self._obs = self._refresh(conn, self._obs, _OBSERVATIONS)
            return self._obs

    def sentence_matrix(self, conn: sqlite3.Connection) -> _Matrix:
        with self._lock:
            self._sentences = self._refresh(conn, self._sentences, _SENTENCES)
            return self._sentences

    def search_pages(self, conn: sqlite3.Connection, query: np.ndarray, limit: int = 100,
                     projects: Collection[str] | None = None) -> list[tuple[int, float]]:
        """Pages by their best chunk's cosine similarity, within ``projects`` (None: all)."""
        m = self.chunk_matrix(conn)
        if not len(m.keys):
            return []
        rows, sims = nearest(m, query, limit * 8, projects)
        best: dict[int, float] = {}
        for i, sim in zip(rows.tolist(), sims.tolist()):
            if sim < MIN_SIMILARITY:
                break
            page = int(m.keys[i])
            if page not in best:
                best[page] = sim
                if len(best) >= limit:
                    break
        return sorted(best.items(), key=lambda kv: -kv[1])

    def search_observations(self, conn: sqlite3.Connection, query: np.ndarray, limit: int = 300,
                            projects: Collection[str] | None = None) -> list[tuple[int, str, float]]:
        """Observations by cosine within ``projects`` (None: all): (rowid, session id,
        score), best first. An observation scores by its best vector: the whole text, or one of
        its sentences, each matching at least MIN_SIMILARITY and then corrected for how crowded
        its neighbourhood is (``hubness``; the correction reorders the rows nearest by cosine,
        twice ``limit`` of them)."""
        best: dict[int, tuple[str, float]] = {}
        for m in (self.observation_matrix(conn), self.sentence_matrix(conn)):
            if not len(m.keys):
                continue
            rows, sims = nearest(m, query, limit * 2, projects)  # several sentences of one turn may rank
            keep = sims >= MIN_SIMILARITY
            rows, sims = rows[keep], sims[keep]
            scores = hubness.adjusted(m.densities, m.matrix, rows, sims) if m.densities else sims
            for i, score in zip(rows.tolist(), scores.tolist()):
                rowid = int(m.keys[i])
                if rowid not in best or score > best[rowid][1]:
                    best[rowid] = (m.sessions[int(m.groups[i])], score)
        ranked = sorted(best.items(), key=lambda kv: -kv[1][1])[:limit]
        return [(rowid, sid, sim) for rowid, (sid, sim) in ranked]
