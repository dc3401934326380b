"""Turn-stream cost against the size of the memory: one project's turns, or every project's.

    python benchmarks/turn_scope.py --db WORKDIR/data/db/memory.sqlite [--queries 200] [--json OUT]

Runs on the database of an earlier ``benchmarks/query.py --workdir WORKDIR`` run (its queries
are regenerated from the same seed), after any number of reuses have grown its observations.
For each query it times the lexical half of the turn streams (FTS5 over observations, the 400
best) twice: bounded to the query's project and ``_global``, as a search does by default, and
over all projects, as ``all=true`` does. The bounded search reads only its project's postings,
so its cost follows the project, not the whole memory.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import query as query_bench  # noqa: E402

from ai_memory.retrieval.fts import search_observations  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--pages", type=int, default=10000, help="the --pages of the query.py run")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    conn = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    with tempfile.TemporaryDirectory() as tmp:
        specs = query_bench.generate(Path(tmp) / "wiki", args.pages)
    queries = query_bench.make_queries(specs, args.queries)
    observations = int(conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0])
    projects = int(conn.execute("SELECT COUNT(DISTINCT project) FROM observations").fetchone()[0])
    timings: dict[str, list[float]] = {"project": [], "all projects": []}
    for q in queries + queries[:20]:  # the first 20 again: measured warm
        for name, scope in (("project", {q["project"], "_global"}), ("all projects", None)):
            start = time.perf_counter()
            search_observations(conn, q["q"], limit=400, projects=scope)
            timings[name].append(time.perf_counter() - start)
    out = {"observations": observations, "projects": projects, "queries": len(queries),
           "turn_fts_ms": {name: query_bench.summarize_ms(values[20:]) for name, values in timings.items()}}
    print(f"{observations:,} observations in {projects} projects, {len(queries)} queries")
    for name, m in out["turn_fts_ms"].items():
        print(f"  turn FTS, {name:<13} p50 {m['p50']:7.2f} ms  p95 {m['p95']:7.2f} ms")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
