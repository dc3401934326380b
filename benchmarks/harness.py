"""What the retrieval benchmarks share: a real daemon on a free port, ranking metrics,
percentiles, and a cache of vectors keyed by content hash.

The cache is a SQLite file with the daemon's own ``embeddings`` table layout (content hash,
model, dim, float32 bytes). Seeding a fresh data dir from it before the daemon starts lets the
embedding job find every text it has seen before by hash and compute only what is new, so a
re-run costs minutes less and measures the same vectors. Piece vectors (late interaction) are
not cached: their word counts are derived per database.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RANK_METRICS = ("hit@1", "hit@5", "hit@10", "mrr@10")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Daemon:
    """``ai-memory serve`` on a free port over ``data``, called through one keep-alive connection."""

    def __init__(self, data: Path, env: dict[str, str] | None = None, timeout_s: float = 120.0) -> None:
        self.port = free_port()
        self.data = data
        full_env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1",
                    "AI_MEMORY_SESSIONS_IDLE_MINUTES": "600", **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(self.port)],
                                     env=full_env, cwd=REPO, stderr=subprocess.DEVNULL)
        self._timeout = timeout_s
        self._conn: http.client.HTTPConnection | None = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the daemon exited with {self.proc.returncode}")
            try:
                if self.call("GET", "/health", auth=False)[0] == 200:
                    break
            except OSError:
                self._conn = None
                time.sleep(0.05)
        self.token = (data / "token").read_text().strip()

    def call(self, method: str, path: str, body: Any = None, auth: bool = True) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if auth:
            headers["Authorization"] = f"Bearer {(self.data / 'token').read_text().strip()}"
        payload = None if body is None else json.dumps(body)
        for attempt in (1, 2):
            reused = self._conn is not None
            if self._conn is None:
                self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self._timeout)
            try:
                self._conn.request(method, path, body=payload, headers=headers)
                resp = self._conn.getresponse()
                data = resp.read()
                return resp.status, (json.loads(data) if data else None)
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._conn.close()
                self._conn = None
                if not reused or attempt == 2:  # the server closed an idle keep-alive: once more, fresh
                    raise
            except (OSError, http.client.HTTPException):
                self._conn.close()
                self._conn = None
                raise
        raise AssertionError("unreachable")

    def wait_ready(self, sessions: int, timeout_s: float = 3600.0, progress: bool = False) -> None:
        """Until ``sessions`` pages are compiled, the model is loaded and nothing waits for a vector."""
        t0 = last = time.monotonic()
        while time.monotonic() - t0 < timeout_s:
            status = self.call("GET", "/status")[1]
            emb = status.get("embeddings", {})
            compiled = status["wiki"]["sessions_compiled"]
            backlog = emb.get("backlog", {"chunks": 0, "observations": 0})
            if compiled >= sessions and emb.get("ready") and not backlog["chunks"] and not backlog["observations"]:
                return
            if emb.get("error"):
                raise RuntimeError(emb["error"])
            if progress and time.monotonic() - last > 30:
                last = time.monotonic()
                print(f"    … {last - t0:5.0f} s: {compiled}/{sessions} sessions compiled, "
                      f"{emb.get('embedded', 0)} vectors, backlog {backlog}", flush=True)
            time.sleep(0.5)
        raise RuntimeError("daemon did not finish compiling and embedding")

    def stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self.proc.terminate()
        self.proc.wait(timeout=60)


# ---- metrics ----------------------------------------------------------------------------------

def rank_of(ranked: Sequence[Any], gold: Iterable[Any], depth: int = 10) -> int | None:
    """1-based rank of the first gold item among the first ``depth``, else None."""
    wanted = set(gold)
    return next((i for i, item in enumerate(ranked[:depth], start=1) if item in wanted), None)


def rank_metrics(rank: int | None) -> dict[str, float]:
    return {"hit@1": float(rank == 1), "hit@5": float(rank is not None and rank <= 5),
            "hit@10": float(rank is not None), "mrr@10": 1.0 / rank if rank else 0.0}


def mean_of(rows: list[dict[str, float]], names: Sequence[str]) -> dict[str, float]:
    return {m: round(statistics.fmean(r[m] for r in rows), 4) for m in names} if rows else {}


def pct(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    return ordered[max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))]


def latency_summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    if not ordered:
        return {}
    return {"p50": round(pct(ordered, 50), 1), "p95": round(pct(ordered, 95), 1),
            "p99": round(pct(ordered, 99), 1), "max": round(ordered[-1], 1), "n": len(ordered)}


# ---- vectors by content hash ----------------------------------------------------------------

def _cache(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE IF NOT EXISTS embeddings (content_hash TEXT NOT NULL, model TEXT NOT NULL,"
                 " dim INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (content_hash, model))")
    return conn


def seed_vectors(db: Path, source: Path) -> int:
    """Create the database and copy ``source``'s vectors (an earlier run's database or a cache
    file) into it, before a daemon starts on it; the number of vectors it then holds."""
    from ai_memory.store.connection import open_write_connection
    from ai_memory.store.migrations import migrate

    db.parent.mkdir(parents=True, exist_ok=True)
    conn = open_write_connection(db)
    try:
        migrate(conn)
        conn.execute("ATTACH DATABASE ? AS source", (str(source),))
        with conn:
            conn.execute("INSERT OR IGNORE INTO embeddings(content_hash, model, dim, vector)"
                         " SELECT content_hash, model, dim, vector FROM source.embeddings")
        count = int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
        conn.execute("DETACH DATABASE source")
    finally:
        conn.close()
    return count


def save_vectors(db: Path, cache: Path) -> int:
    """Add the database's vectors to the cache file; how many were new."""
    conn = _cache(cache)
    try:
        before = int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
        conn.execute("ATTACH DATABASE ? AS live", (f"file:{db}?mode=ro",))
        with conn:
            conn.execute("INSERT OR IGNORE INTO embeddings SELECT content_hash, model, dim, vector FROM live.embeddings")
        return int(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]) - before
    finally:
        conn.close()


def encode_cached(embedder: Any, texts: list[str], cache: Path | None) -> np.ndarray:
    """The texts' vectors, read from the cache file where it holds them, the rest encoded (and added)."""
    from ai_memory.core.chunks import text_hash

    hashes = [text_hash(t) for t in texts]
    found: dict[str, np.ndarray] = {}
    conn = _cache(cache) if cache is not None else None
    try:
        if conn is not None:
            for i in range(0, len(hashes), 500):
                part = hashes[i:i + 500]
                marks = ",".join("?" * len(part))
                for h, blob in conn.execute(f"SELECT content_hash, vector FROM embeddings WHERE model = ?"
                                            f" AND content_hash IN ({marks})", (embedder.model_id, *part)):
                    found[h] = np.frombuffer(blob, dtype=np.float32)
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            text_of = dict(zip(hashes, texts))
            vectors = embedder.encode([text_of[h] for h in missing])
            found.update(zip(missing, vectors))
            if conn is not None:
                with conn:
                    conn.executemany("INSERT OR IGNORE INTO embeddings VALUES (?,?,?,?)",
                                     [(h, embedder.model_id, embedder.dim, found[h].astype(np.float32).tobytes())
                                      for h in missing])
    finally:
        if conn is not None:
            conn.close()
    return np.stack([found[h] for h in hashes]) if hashes else np.zeros((0, embedder.dim), dtype=np.float32)


# ---- ablation ---------------------------------------------------------------------------------


def explained_hits(d: Daemon, body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every candidate the daemon's reranker scored for one query, with its features."""
    from ai_memory.retrieval.search import RERANK_DEPTH

    status, answer = d.call("POST", "/v1/query", {**body, "k": RERANK_DEPTH, "explain": True})
    if status != 200:
        raise RuntimeError(f"query refused ({status}): {answer}")
    return list(answer["hits"])


def rescored(hits: list[dict[str, Any]], drop: str | None) -> list[dict[str, Any]]:
    """The candidates ranked again with one feature left out of the registry: each hit's
    features and authority, as ``explain`` reported them, recombined by the reranker's own
    ``combine`` (the streams and the candidates stay those of the full search)."""
    from ai_memory.retrieval.features import FEATURES, combine, without

    registry = without([drop] if drop else [], FEATURES)
    scored = [(combine(h["explain"]["features"], h["explain"]["authority"], registry), i, h)
              for i, h in enumerate(hits)]
    return [h for _, _, h in sorted(scored, key=lambda s: (-s[0], s[1]))]


def ablation_rows(explained: list[tuple[list[dict[str, Any]], Any]],
                  judge: Any, names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Mean metrics with every feature of the registry (``none``) and with each removed in turn;
    ``judge(ranked_hits, gold)`` gives one question's metrics."""
    from ai_memory.retrieval.features import FEATURES

    out: dict[str, dict[str, float]] = {}
    for drop in [None, *(f.name for f in FEATURES)]:
        rows = [judge(rescored(hits, drop), gold) for hits, gold in explained]
        out[drop or "none"] = mean_of(rows, names)
    return out


def print_ablation(table: dict[str, dict[str, float]], names: Sequence[str]) -> None:
    print("\nablation (each feature of the reranker removed in turn; same candidates):")
    print(f"  {'without':<16}" + "".join(f"{m:>12}" for m in names))
    full = table["none"]
    for drop, row in table.items():
        cells = "".join(f"{row[m]:>12.3f}" for m in names)
        delta = "" if drop == "none" else f"   Δmrr {row['mrr@10'] - full['mrr@10']:+.3f}"
        print(f"  {drop:<16}{cells}{delta}")
