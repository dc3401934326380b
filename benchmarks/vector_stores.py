"""Vector stores side by side, in one run: what ai-memory searches with now (``retrieval.vectors``:
float32 brute force up to ``EXACT_ROWS`` rows, sign bits and int8 codes beyond,
``retrieval.quantized``) beside the libraries issue 42 names: usearch (an HNSW index in a file,
memory-mapped, float16 or int8 rows) and sqlite-vec (vectors in the database itself; it needs a
``sqlite3`` that can load extensions, which this run reports when it cannot).

    python benchmarks/vector_stores.py [--rows 30000,300000] [--queries 200] [--json OUT]

The libraries are not ai-memory's dependencies: ``pip install usearch sqlite-vec pysqlite3-binary`` into the venv
first (a store whose library is missing is reported as unavailable).

Rows are pseudo-random unit vectors in clusters (a topic's chunks lie near each other, as
real ones do; 10,000 pages are about 30,000 chunks), queries are perturbed rows. For each store
and size: build time (what a reindex pays), RSS added by the built index, recall@10 against
exact float32 search, and query p50/p95 for a top-100 (what a search asks of its vector stream),
each in a fresh process. The RSS is the process's after the searches, less its RSS before the
rows were made (the input freed): what the index holds resident.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DIM = 384
STORES = ("ours", "usearch-f16", "usearch-i8", "sqlite-vec", "sqlite-vec-bit")
RESCORE, MIN_CANDIDATES = 8, 2048  # sign-bit candidates, as ``retrieval.quantized`` keeps them


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def data(rows: int, queries: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(1, rows // 50), DIM)).astype(np.float32)
    vectors = centres[rng.integers(0, len(centres), rows)] + 0.8 * rng.standard_normal((rows, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    picked = vectors[rng.integers(0, rows, queries)] + 0.5 * rng.standard_normal((queries, DIM)).astype(np.float32) / np.sqrt(DIM) * 4
    picked /= np.linalg.norm(picked, axis=1, keepdims=True)
    return vectors, picked.astype(np.float32)


def build(store: str, vectors: np.ndarray, work: Path):
    """A search function ``(query, n) -> row ids``, over ``vectors`` held as ``store`` holds them."""
    if store == "ours":
        from ai_memory.retrieval.quantized import QuantizedRows
        from ai_memory.retrieval.vectors import EXACT_ROWS, top_indices

        if len(vectors) <= EXACT_ROWS:
            matrix = vectors.copy()
            return lambda q, n: top_indices(matrix @ q, n)
        rows = QuantizedRows.of(vectors, work)
        return lambda q, n: rows.nearest(q, n)[0]
    if store.startswith("usearch"):
        from usearch.index import Index

        index = Index(ndim=DIM, metric="cos", dtype=store.split("-")[1], connectivity=16, expansion_add=128,
                      expansion_search=128)
        index.add(np.arange(len(vectors)), vectors)
        path = work / "index.usearch"
        index.save(str(path))
        del index
        viewed = Index.restore(str(path), view=True)  # memory-mapped, as a daemon would open it
        return lambda q, n: viewed.search(q, n).keys
    return sqlite_vec_search(store, vectors, work)


def sqlite_vec_connection(path: Path):
    """A connection with sqlite-vec loaded: through this Python's ``sqlite3`` where it can load
    extensions, else through pysqlite3 (the same module API over its own SQLite build)."""
    import sqlite3

    import sqlite_vec

    module = sqlite3
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        try:
            import pysqlite3 as module  # type: ignore[no-redef]
        except ImportError as exc:
            raise RuntimeError("this Python's sqlite3 cannot load extensions; pip install pysqlite3-binary") from exc
    conn = module.connect(str(path))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    return conn


def sqlite_vec_search(store: str, vectors: np.ndarray, work: Path):
    """``sqlite-vec``: float32 rows scanned in full; ``sqlite-vec-bit``: sign bits scanned for
    ``RESCORE`` x n candidates (at least ``MIN_CANDIDATES``), which the float32 rows (an auxiliary column) then rank, in SQL."""
    conn = sqlite_vec_connection(work / "vec.sqlite")
    if store == "sqlite-vec":
        conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{DIM}] distance_metric=cosine)")
        conn.executemany("INSERT INTO v(rowid, embedding) VALUES (?, ?)",
                         ((i, vectors[i].tobytes()) for i in range(len(vectors))))
        conn.commit()
        return lambda q, n: np.array([r[0] for r in conn.execute(
            "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ?", (q.tobytes(), n))])
    conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(bits bit[{DIM}], +full blob)")
    conn.executemany("INSERT INTO v(rowid, bits, full) VALUES (?, vec_quantize_binary(?), ?)",
                     ((i, vectors[i].tobytes(), vectors[i].tobytes()) for i in range(len(vectors))))
    conn.commit()
    query = ("WITH c AS (SELECT rowid, full FROM v WHERE bits MATCH vec_quantize_binary(?) AND k = ?) "
             "SELECT rowid FROM c ORDER BY vec_distance_cosine(full, ?) LIMIT ?")
    return lambda q, n: np.array([r[0] for r in conn.execute(query, (q.tobytes(), max(RESCORE * n, MIN_CANDIDATES), q.tobytes(), n))])


def measure(store: str, rows: int, queries: int) -> dict[str, object]:
    import gc

    from ai_memory.heap import trim_heap

    before = rss_mib()
    vectors, asked = data(rows, queries)
    exact = [set(np.argsort(-(vectors @ q))[:10].tolist()) for q in asked]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        try:
            search = build(store, vectors, Path(tmp))
        except (ImportError, RuntimeError) as exc:
            return {"error": str(exc)}
        built = time.perf_counter() - t0
        del vectors
        gc.collect()
        trim_heap()
        recall, times = [], []
        for q, want in zip(asked, exact):
            t = time.perf_counter()
            found = search(q, 100)
            times.append((time.perf_counter() - t) * 1000)
            recall.append(len(want & set(np.asarray(found)[:10].tolist())) / 10)
        added = rss_mib() - before  # the index as the searches left it resident (the input let go)
    times.sort()
    return {"build_s": round(built, 2), "rss_added_mib": round(added, 1), "recall_at_10": round(statistics.mean(recall), 4),
            "p50_ms": round(times[len(times) // 2], 2), "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="30000,300000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store", choices=STORES, help=argparse.SUPPRESS)  # the child's side
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.store:
        print(json.dumps(measure(args.store, int(args.rows), args.queries)))
        return
    results = {}
    print(f"{'store':<15} {'rows':>8} {'build s':>8} {'RSS + MiB':>10} {'recall@10':>10} {'p50 ms':>7} {'p95 ms':>7}")
    for rows in (int(r) for r in args.rows.split(",")):
        for store in STORES:
            done = subprocess.run([sys.executable, __file__, "--store", store, "--rows", str(rows),
                                   "--queries", str(args.queries)], capture_output=True, text=True, cwd=REPO)
            r = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {"error": done.stderr[-300:]}
            results[f"{store}@{rows}"] = r
            if "error" in r:
                print(f"{store:<15} {rows:>8} unavailable: {r['error']}")
                continue
            print(f"{store:<15} {rows:>8} {r['build_s']:>8} {r['rss_added_mib']:>10} {r['recall_at_10']:>10} "
                  f"{r['p50_ms']:>7} {r['p95_ms']:>7}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
