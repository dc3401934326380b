"""The vector stream: brute-force cosine over normalized float32 vectors held in memory.

Matrices are loaded from SQLite once and reloaded only when the embeddings or chunks change
(a cheap signature query per search). Brute force is exact, and at 10,000 pages x a few
chunks it is one matrix-vector product of a few milliseconds.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

import numpy as np

# Below this cosine, all-MiniLM-L6-v2 matches are noise (unrelated or made-up words score
# 0.1-0.25): a page found only that way is no evidence, and must not hide "nothing found".
MIN_SIMILARITY = 0.30


@dataclass
class _Matrix:
    signature: tuple
    keys: np.ndarray       # page id (chunks) or observation rowid (observations)
    groups: np.ndarray     # page id again, or the observation's session index
    sessions: list[str]    # for observations: session ids by group index
    matrix: np.ndarray     # (n, dim) float32, unit rows


class VectorIndex:
    """Cached matrices for chunk vectors and observation vectors of one model."""

    def __init__(self, model: str, dim: int) -> None:
        self.model = model
        self.dim = dim
        self._lock = threading.Lock()
        self._chunks: _Matrix | None = None
        self._obs: _Matrix | None = None

    def _signature(self, conn: sqlite3.Connection, table: str) -> tuple:
        emb = conn.execute("SELECT MAX(rowid), COUNT(*) FROM embeddings").fetchone()
        own = conn.execute(f"SELECT MAX(rowid), COUNT(*) FROM {table}").fetchone()
        return tuple(emb) + tuple(own)

    def _load(self, conn: sqlite3.Connection, sql: str, signature: tuple, sessions: bool) -> _Matrix:
        rows = conn.execute(sql, (self.model,)).fetchall()
        keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        names: list[str] = []
        index: dict[str, int] = {}
        if sessions:
            groups = np.fromiter((index.setdefault(r[1], len(index)) for r in rows), dtype=np.int64, count=len(rows))
            names = [""] * len(index)
            for name, i in index.items():
                names[i] = name
        else:
            groups = keys
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.dim) \
            if rows else np.zeros((0, self.dim), dtype=np.float32)
        return _Matrix(signature, keys, groups, names, matrix)

    def chunk_matrix(self, conn: sqlite3.Connection) -> _Matrix:
        sig = self._signature(conn, "chunks")
        with self._lock:
            if self._chunks is None or self._chunks.signature != sig:
                self._chunks = self._load(conn, (
                    "SELECT c.page_id, c.page_id, e.vector FROM chunks c JOIN embeddings e"
                    " ON e.content_hash = c.content_hash AND e.model = ?"), sig, sessions=False)
            return self._chunks

    def observation_matrix(self, conn: sqlite3.Connection) -> _Matrix:
        sig = self._signature(conn, "observations")
        with self._lock:
            if self._obs is None or self._obs.signature != sig:
                self._obs = self._load(conn, (
                    "SELECT o.rowid, o.session_id, e.vector FROM observations o JOIN embeddings e"
                    " ON e.content_hash = o.embed_hash AND e.model = ?"), sig, sessions=True)
            return self._obs

    def search_pages(self, conn: sqlite3.Connection, query: np.ndarray, limit: int = 100) -> list[tuple[int, float]]:
        """Pages by their best chunk's cosine similarity."""
        m = self.chunk_matrix(conn)
        if not len(m.keys):
            return []
        sims = m.matrix @ query
        best: dict[int, float] = {}
        for i in np.argsort(-sims)[: limit * 8]:
            if sims[i] < MIN_SIMILARITY:
                break
            page = int(m.keys[i])
            if page not in best:
                best[page] = float(sims[i])
                if len(best) >= limit:
                    break
        return sorted(best.items(), key=lambda kv: -kv[1])

    def search_observations(self, conn: sqlite3.Connection, query: np.ndarray,
                            limit: int = 300) -> list[tuple[int, str, float]]:
        """Observations by cosine: (rowid, session id, similarity), best first."""
        m = self.observation_matrix(conn)
        if not len(m.keys):
            return []
        sims = m.matrix @ query
        top = np.argsort(-sims)[:limit]
        return [(int(m.keys[i]), m.sessions[int(m.groups[i])], float(sims[i])) for i in top
                if sims[i] >= MIN_SIMILARITY]
