"""Scale: how ingest, search, briefing, reindex and sizes grow with the number of pages.

    python benchmarks/scale.py --pages 10000 [--pages 100000] [--observations-per-page 10]
        [--queries 200] [--burst-seconds 30] [--real-page-vectors]

For each ``--pages`` N, on a fresh data dir and the daemon of this checkout (the model worker
structure):

1. N pages (``benchmarks/query.py``'s generator) with page vectors by content hash (pseudo-random
   unit vectors unless ``--real-page-vectors``; see ``footprint.py``), indexed at start;
2. N x ``--observations-per-page`` observations posted through ``/hook`` as coding sessions of
   50 events (SessionStart, a prompt, Read/Bash calls, two Edits, SessionEnd), while one client
   searches without pause: ingest throughput with searching;
3. once every vector is stored: ``/v1/query`` p50/p95 idle and under a burst of 32 hook clients,
   ``/v1/briefing`` p95, ``POST /v1/reindex`` (no re-embedding: vectors are kept by content
   hash) with the daemon's and worker's peak RSS, database and vector sizes.

With two or more sizes, the ratio of each figure from the smallest to the largest is printed.
On a shared 2-core machine 100,000 pages take hours (1M observations through HTTP alone is
about an hour); run what fits and say so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from footprint import fill_page_vectors, snapshot, tree  # noqa: E402
from query import (  # noqa: E402
    HOOK_CLIENTS, PROJECTS, Client, free_port, generate, hook_load, make_queries, post_hooks, topic, wait_up,
)

GOALS = {"query_p95_idle_ms": 100.0, "query_p95_burst_ms": 200.0, "briefing_p95_ms": 100.0, "reindex_s": 300.0,
         "rss_mb": 800.0}
EVENTS_PER_SESSION = 50


def session_events(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """A coding session's hook events: what most of a day's observations look like."""
    project = PROJECTS[n % len(PROJECTS)]
    sid, t = f"scale-{n:07d}", topic(rng)
    base = {"session_id": sid, "cwd": f"/home/dev/{project}", "transcript_path": f"/tmp/{sid}.jsonl"}
    events = [{**base, "hook_event_name": "SessionStart", "source": "startup"},
              {**base, "hook_event_name": "UserPromptSubmit",
               "prompt": f"Fix the {t['error']} in `{t['func']}`: the {t['comp']} {t['noun']} times out under load."}]
    for i in range(EVENTS_PER_SESSION - 3):
        path = f"/home/dev/{project}/{t['path']}"
        if i in (20, 40):
            tin = {"file_path": path, "old_string": f"{t['const']} = 30", "new_string": f"{t['const']} = {i + 5}"}
            tool, tout = "Edit", {"filePath": path, "success": True}
        elif i % 3:
            tool, tin = "Read", {"file_path": path.replace(".py", f"_{i}.py")}
            tout = {"content": f"class {t['cls']}:\n    def {t['func']}(self):\n        return {i}\n"}
        else:
            tool, tin = "Bash", {"command": f"pytest tests/{t['comp']} -k {t['noun']}_{i} -q"}
            tout = {"stdout": f"{i + 3} passed in 0.{i}s", "stderr": "", "exit_code": 0}
        events.append({**base, "hook_event_name": "PostToolUse", "tool_name": tool, "tool_use_id": f"{sid}-{i}",
                       "tool_input": tin, "tool_response": tout})
    events.append({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    return events


def percentiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    if not ordered:
        return {"n": 0, "p50": 0.0, "p95": 0.0}
    return {"n": len(ordered), "p50": round(ordered[len(ordered) // 2], 1),
            "p95": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 1)}


def search_until(client: Client, queries: list[dict[str, Any]], stop: threading.Event, out: list[float]) -> None:
    i = 0
    while not stop.is_set():
        item = queries[i % len(queries)]
        i += 1
        t0 = time.perf_counter()
        status, _ = client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "k": 10})
        assert status == 200
        out.append((time.perf_counter() - t0) * 1000)


def settled(client: Client, pages: int, limit_s: float) -> dict[str, Any]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        _, st = client.call("GET", "/status")
        emb, workers = st["embeddings"], st.get("query_workers", {"configured": 0})
        if (st["counts"]["pages"] >= pages and emb.get("ready") and workers.get("ready", 0) >= workers["configured"]
                and emb.get("backlog") == {"chunks": 0, "observations": 0}):
            return st
        time.sleep(1.0)
    raise RuntimeError("the daemon did not settle")


def sizes(db: Path) -> dict[str, float]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        one = lambda sql: conn.execute(sql).fetchone()[0] or 0  # noqa: E731
        return {"db_mb": round(db.stat().st_size / 2**20, 1),
                "observations": one("SELECT COUNT(*) FROM observations"),
                "vectors": one("SELECT COUNT(*) FROM embeddings"),
                "vectors_mb": round(one("SELECT SUM(LENGTH(vector)) FROM embeddings") / 2**20, 1),
                "piece_vectors_mb": round(one("SELECT SUM(LENGTH(bits)) FROM token_vectors") / 2**20, 1)}
    finally:
        conn.close()


def peak_rss_during(pid: int, stop: threading.Event, out: dict[str, float]) -> None:
    while not stop.is_set():
        out["rss_mb"] = max(out.get("rss_mb", 0.0), snapshot(pid)["rss_mb"])
        time.sleep(0.5)


def run_size(pages: int, per_page: float, n_queries: int, burst_s: float, real_vectors: bool,
             work: Path) -> dict[str, Any]:
    data, staged, port = work / f"p{pages}" / "data", work / f"p{pages}" / "staged", free_port()
    specs = generate(data / "wiki", pages)
    if not real_vectors:
        (staged / "db").mkdir(parents=True)
        (staged / "wiki").symlink_to(data / "wiki")
        fill_page_vectors(staged, data / "db" / "memory.sqlite")
    env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "AI_MEMORY_SESSIONS_IDLE_MINUTES": "600"}
    out: dict[str, Any] = {"pages": pages}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)], env=env,
                            cwd=REPO, stderr=subprocess.DEVNULL)
    try:
        wait_up(port, data / "token", proc, limit_s=3600)
        client, searcher = (Client(port, (data / "token").read_text().strip()) for _ in range(2))
        settled(client, pages, 3600)
        out["start_index_s"] = round(time.monotonic() - t0, 1)
        queries = make_queries(specs, n_queries)
        sessions = max(1, int(pages * per_page / EVENTS_PER_SESSION))
        rng = random.Random(5)
        events = [e for n in range(sessions) for e in session_events(rng, n)]
        stop, during = threading.Event(), []
        thread = threading.Thread(target=search_until, args=(searcher, queries, stop, during))
        thread.start()
        seconds = asyncio.run(post_hooks(port, client.token, events, 16))
        stop.set()
        thread.join()
        out["ingest"] = {"events": len(events), "seconds": round(seconds, 1),
                         "per_s": round(len(events) / seconds, 1), "query_while_ingesting_ms": percentiles(during)}
        print(f"  [{pages:,}] ingest {len(events):,} events in {seconds:.0f} s ({len(events) / seconds:,.0f}/s) "
              f"while searching: {out['ingest']['query_while_ingesting_ms']}", flush=True)
        t1 = time.monotonic()
        settled(client, pages, 7200)
        out["embed_after_ingest_s"] = round(time.monotonic() - t1, 1)
        out["query_idle_ms"] = idle(client, queries)
        out["query_burst_ms"] = burst(client, port, queries, burst_s)
        out["briefing_ms"] = briefings(client, work, 100)
        print(f"  [{pages:,}] query idle {out['query_idle_ms']}, burst {out['query_burst_ms']}, "
              f"briefing {out['briefing_ms']}", flush=True)
        settled(client, pages, 3600)
        out["rss_before_reindex_mb"] = snapshot(proc.pid)["rss_mb"]
        peak: dict[str, float] = {}
        stop = threading.Event()
        watcher = threading.Thread(target=peak_rss_during, args=(proc.pid, stop, peak))
        watcher.start()
        t2 = time.monotonic()
        status, report = client.call("POST", "/v1/reindex", {})
        out["reindex_s"] = round(time.monotonic() - t2, 1)
        stop.set()
        watcher.join()
        assert status == 200, report
        out["reindex_peak_rss_mb"] = peak.get("rss_mb", 0.0)
        out["processes"] = len(tree(proc.pid))
        out["sizes"] = sizes(data / "db" / "memory.sqlite")
        print(f"  [{pages:,}] reindex {out['reindex_s']} s (peak RSS of all processes {out['reindex_peak_rss_mb']} MB); "
              f"sizes {out['sizes']}", flush=True)
        client.close()
        searcher.close()
    finally:
        proc.terminate()
        proc.wait(timeout=300)
    return out


def idle(client: Client, queries: list[dict[str, Any]]) -> dict[str, float]:
    ms = []
    for item in queries:
        t0 = time.perf_counter()
        client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "k": 10})
        ms.append((time.perf_counter() - t0) * 1000)
    return percentiles(ms)


def burst(client: Client, port: int, queries: list[dict[str, Any]], seconds: float) -> dict[str, float]:
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    started, stop, results = ctx.Event(), ctx.Event(), ctx.Queue()
    loader = ctx.Process(target=hook_load, args=(port, client.token, HOOK_CLIENTS, "embedded", started, stop, results))
    loader.start()
    ms: list[float] = []
    try:
        started.wait(60)
        t0 = time.monotonic()
        for item in queries * 10:
            if time.monotonic() - t0 > seconds:
                break
            q0 = time.perf_counter()
            client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "k": 10})
            ms.append((time.perf_counter() - q0) * 1000)
    finally:
        stop.set()
    hooks = results.get(timeout=60)
    loader.join(timeout=30)
    return {**percentiles(ms), "hooks_per_s": hooks["hooks_per_s"]}


def briefings(client: Client, work: Path, calls: int) -> dict[str, float]:
    ms = []
    for i in range(calls):
        cwd = urllib.parse.quote(f"/home/dev/{PROJECTS[i % len(PROJECTS)]}")
        t0 = time.perf_counter()
        status, _ = client.call("GET", f"/v1/briefing?cwd={cwd}&session_id=brief-{i}&agent=codex")
        assert status == 200
        ms.append((time.perf_counter() - t0) * 1000)
    return percentiles(ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, action="append", help="repeatable: 10000, 100000")
    parser.add_argument("--observations-per-page", type=float, default=10.0)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--burst-seconds", type=float, default=30.0)
    parser.add_argument("--real-page-vectors", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for pages in sorted(args.pages or [10000]):
            print(f"{pages:,} pages, {args.observations_per_page:g} observations a page", flush=True)
            results.append(run_size(pages, args.observations_per_page, args.queries, args.burst_seconds,
                                    args.real_page_vectors, Path(tmp)))
    rows = [("pages", lambda r: r["pages"]), ("observations", lambda r: r["sizes"]["observations"]),
            ("ingest events/s while searching", lambda r: r["ingest"]["per_s"]),
            ("query p95 while ingesting ms", lambda r: r["ingest"]["query_while_ingesting_ms"]["p95"]),
            ("query p50 idle ms", lambda r: r["query_idle_ms"]["p50"]),
            ("query p95 idle ms", lambda r: r["query_idle_ms"]["p95"]),
            ("query p95 under burst ms", lambda r: r["query_burst_ms"]["p95"]),
            ("briefing p95 ms", lambda r: r["briefing_ms"]["p95"]),
            ("reindex s", lambda r: r["reindex_s"]), ("reindex peak RSS MB", lambda r: r["reindex_peak_rss_mb"]),
            ("database MB", lambda r: r["sizes"]["db_mb"]), ("vectors", lambda r: r["sizes"]["vectors"]),
            ("vectors MB", lambda r: r["sizes"]["vectors_mb"]),
            ("piece vectors MB", lambda r: r["sizes"]["piece_vectors_mb"])]
    print("\n=== scale " + "=" * 70)
    print(f"{'':<34}" + "".join(f"{r['pages']:>14,}" for r in results) + ("       ratio" if len(results) > 1 else ""))
    for label, get in rows:
        values = [get(r) for r in results]
        ratio = f"{values[-1] / values[0]:>12.2f}" if len(values) > 1 and values[0] else ""
        print(f"{label:<34}" + "".join(f"{v:>14,}" for v in values) + ratio)
    print("goals at 100k pages: " + ", ".join(f"{k} <= {v:g}" for k, v in GOALS.items()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
