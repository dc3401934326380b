"""Scale: how ingest, search, briefing, reindex and sizes grow with the number of pages.

    python benchmarks/scale.py --pages 10000 [--pages 100000] [--observations-per-page 10]
        [--hook-sessions 40] [--queries 200] [--burst-seconds 30] [--json out.json] [--keep DIR | --reuse DIR]

For each ``--pages`` N, on a fresh data dir and the daemon of this checkout:

1. **built offline** (``benchmarks/scale_build.py``, no daemon, no model): N pages
   (``benchmarks/query.py``'s generator) committed to git and indexed by the rebuild that
   ``reindex`` runs; N x ``--observations-per-page`` observations as coding sessions of 50
   hook events (SessionStart, a prompt, Read/Bash calls, two Edits, SessionEnd), each through
   the sanitizer and the real single writer (journal, FTS rows, group commit); their vectors
   through the embedding job's own functions, with a random projection of each text's words in
   place of the model (the page chunks' too; see ``scale_build.WordVectors``). A million observations through ``/hook``
   and the model would take many hours on a shared 2-core machine; stored this way they are
   the same rows, journal and vectors, but their throughput says nothing about the hook path;
2. **through HTTP**, the daemon started on that data dir: ``--hook-sessions`` more sessions
   posted to ``/hook`` by 16 clients while one client searches without pause (the ingest
   throughput with searching, and the query latency meanwhile: their texts are embedded by the
   real model in the daemon); then, once every vector is stored and the daemon is quiet
   (under 5% of a core: what the sample left to do runs first), ``/v1/query`` p50/p95 idle
   and under a burst of 32 hook clients, ``/v1/briefing`` p95, ``/v1/recall`` p50/p95 (prompt
   recall, as the prompt hook asks it), ``POST /v1/reindex`` (no
   re-embedding: vectors are kept by content hash) with the peak RSS of every process, database
   and vector sizes, and the peak RSS over the whole run, with each phase's highest sample and
   its processes (what step 3 does in between runs in this process, not the daemon's);
3. **in this process**, the daemon idle, before the reindex: the quantized vector search against the exact float32
   one over the same database, each query made into a vector as the stored texts were (recall
   of the top 300 rows of each matrix, of the rows each vector stream returns, and of a whole
   search's top 10 hits).

With two or more sizes, the ratio of each figure from the smallest to the largest is printed.
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
from contextlib import closing
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402

from footprint import DIM, MODEL_ID, cpu_percent, snapshot, tree  # noqa: E402
from query import (  # noqa: E402
    HOOK_CLIENTS, PROJECTS, Client, free_port, generate, hook_load, make_queries, page_specs, post_hooks, topic,
    wait_up,
)
from scale_build import CachedVectors, WordVectors, fill_page_vectors, write_pages, write_sessions  # noqa: E402

GOALS = {"query_p95_idle_ms": 100.0, "query_p95_burst_ms": 200.0, "briefing_p95_ms": 100.0, "reindex_s": 300.0,
         "rss_mb": 800.0}
PROMPT_RECALL_P95_MS = 60.0  # at 10,000 pages (issue 40)
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


class PeakMeter:
    """Samples the RSS of every process of the daemon twice a second, and keeps the highest
    sample of each phase of the run with its processes: where the run's peak happens."""

    def __init__(self, pid: int) -> None:
        self.pid, self.phase = pid, "start"
        self.peaks: dict[str, dict[str, Any]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def start(self) -> PeakMeter:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.is_set():
            now, phase = snapshot(self.pid), self.phase
            if now["rss_mb"] > self.peaks.get(phase, {}).get("rss_mb", 0.0):
                self.peaks[phase] = {"rss_mb": now["rss_mb"], "by_process": {
                    f"{p['pid']} {p['cmd'].split(' -c ')[-1][:40]}": p["rss_mb"] for p in now["processes"]}}
            self._stop.wait(0.5)

    def peak(self, phase: str | None = None) -> float:
        chosen = [self.peaks.get(phase, {})] if phase else list(self.peaks.values())
        return max((p.get("rss_mb", 0.0) for p in chosen), default=0.0)

    def highest(self) -> str:
        phase = max(self.peaks, key=lambda name: self.peaks[name]["rss_mb"], default="")
        return f"{phase}: {self.peaks[phase]}" if phase else "none sampled"


def run_size(pages: int, per_page: float, hook_sessions: int, n_queries: int, burst_s: float,
             work: Path, reuse: bool = False) -> dict[str, Any]:
    data, port = work / f"p{pages}" / "data", free_port()
    db = data / "db" / "memory.sqlite"
    out: dict[str, Any] = {"pages": pages}
    words = WordVectors()
    if reuse:  # built by an earlier run with --keep (and grown by its /hook sample): no build
        specs = page_specs(random.Random(7), pages)
        with closing(sqlite3.connect(db)) as conn:
            sessions = int(conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
        out["build"] = {"reused": str(data)}
    else:
        t0 = time.monotonic()
        specs, out["build"] = write_pages(data, pages, generate)
        out["build"]["page_vectors"] = fill_page_vectors(data, words)
        sessions = max(1, int(pages * per_page / EVENTS_PER_SESSION))
        out["build"].update(write_sessions(data, sessions, session_events, words))
        out["build"]["build_s"] = round(time.monotonic() - t0, 1)
        print(f"  [{pages:,}] built offline in {out['build']['build_s']} s: {out['build']}", flush=True)
    env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "AI_MEMORY_SESSIONS_IDLE_MINUTES": "600"}
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)], env=env,
                            cwd=REPO, stderr=subprocess.DEVNULL)
    meter = PeakMeter(proc.pid).start()
    try:
        wait_up(port, data / "token", proc, limit_s=3600)
        client, searcher = (Client(port, (data / "token").read_text().strip()) for _ in range(2))
        settled(client, pages, 3600)
        out["start_s"] = round(time.monotonic() - t0, 1)
        queries = make_queries(specs, n_queries)
        for item in queries[:20]:  # the worker's matrices load on the first searches
            client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "k": 10})
        out["rss_settled_mb"] = snapshot(proc.pid)["rss_mb"]
        meter.phase = "hook sample"
        out["ingest"] = ingest_sample(client, searcher, port, queries, sessions, hook_sessions)
        print(f"  [{pages:,}] started and settled in {out['start_s']} s (RSS {out['rss_settled_mb']} MB); "
              f"/hook sample: {out['ingest']}", flush=True)
        meter.phase = "hook sample's work settling"
        settled(client, pages, 3600)
        out["quiet_after_s"] = quiet(proc.pid)
        meter.phase = "idle queries"
        out["query_idle_ms"] = idle(client, queries)
        meter.phase = "prompt recall"  # idle too: as a prompt comes, between an agent's tool calls
        out["prompt_recall_ms"] = prompt_recalls(client, queries, 200)
        meter.phase = "burst"
        out["query_burst_ms"] = burst(client, port, queries, burst_s)
        meter.phase = "briefings"
        out["briefing_ms"] = briefings(client, work, 100)
        print(f"  [{pages:,}] query idle (quiet after {out['quiet_after_s']} s) {out['query_idle_ms']}, "
              f"burst {out['query_burst_ms']}, "
              f"briefing {out['briefing_ms']}, prompt recall {out['prompt_recall_ms']} "
              f"(target p95 <= {PROMPT_RECALL_P95_MS:g} ms at 10,000 pages)", flush=True)
        meter.phase = "burst's work settling, recall"
        settled(client, pages, 3600)
        # Before the reindex: a rebuilt database's observations wait for the embedding job to link
        # them to their vectors again. The daemon is idle meanwhile.
        out["recall"] = recall(db, queries[:100], words)
        print(f"  [{pages:,}] fast vector path against the exact one: {out['recall']}", flush=True)
        before = snapshot(proc.pid)
        out["rss_before_reindex_mb"] = before["rss_mb"]
        print(f"  [{pages:,}] RSS after the burst, its vectors stored: {before['rss_mb']} MB, by process "
              + ", ".join(f"{p['cmd'].split(' -c ')[-1][:40]!r} {p['rss_mb']}" for p in before["processes"]), flush=True)
        meter.phase = "reindex"
        t2 = time.monotonic()
        patient = Client(port, client.token, timeout=7200.0)  # a large reindex takes minutes
        status, report = patient.call("POST", "/v1/reindex", {})
        patient.close()
        out["reindex_s"] = round(time.monotonic() - t2, 1)
        meter.phase = "after the reindex"
        assert status == 200, report
        out["reindex_peak_rss_mb"] = meter.peak("reindex")
        out["processes"] = len(tree(proc.pid))
        out["sizes"] = sizes(db)
        t3 = time.monotonic()
        try:  # the rebuilt observations are linked to their (kept) vectors again by the embedding job
            settled(client, pages, 900)
            out["relinked_after_reindex_s"] = round(time.monotonic() - t3, 1)
        except RuntimeError:
            out["relinked_after_reindex_s"] = None
        print(f"  [{pages:,}] observations linked to their vectors again "
              f"{out['relinked_after_reindex_s']} s after the reindex (None: not within 900 s)", flush=True)
        print(f"  [{pages:,}] reindex {out['reindex_s']} s (peak RSS of all processes {out['reindex_peak_rss_mb']} MB); "
              f"sizes {out['sizes']}", flush=True)
        client.close()
        searcher.close()
    finally:
        meter.phase = "stopping"
        proc.terminate()
        proc.wait(timeout=300)
        meter.stop()
    out["peak_rss_mb"], out["peak_rss_by_phase"] = meter.peak(), meter.peaks
    print(f"  [{pages:,}] peak RSS of all processes over the run {out['peak_rss_mb']} MB, "
          f"highest in {meter.highest()}; by phase: "
          + ", ".join(f"{name} {p['rss_mb']}" for name, p in meter.peaks.items()), flush=True)
    return out


def ingest_sample(client: Client, searcher: Client, port: int, queries: list[dict[str, Any]], first: int,
                  sessions: int) -> dict[str, Any]:
    """``sessions`` more coding sessions through the real hook path (``/hook``, 16 clients),
    while one client searches without pause: ingest throughput with searching."""
    rng = random.Random(6)
    events = [e for n in range(first, first + sessions) for e in session_events(rng, n)]
    stop, during = threading.Event(), []
    thread = threading.Thread(target=search_until, args=(searcher, queries, stop, during))
    thread.start()
    seconds = asyncio.run(post_hooks(port, client.token, events, 16))
    stop.set()
    thread.join()
    return {"events": len(events), "seconds": round(seconds, 1), "per_s": round(len(events) / seconds, 1),
            "query_while_ingesting_ms": percentiles(during)}


def recall(db: Path, queries: list[dict[str, Any]], words: WordVectors) -> dict[str, Any]:
    """The product's vector search over the quantized matrices against the exact float32 one,
    over the same database, with each query made into a vector as the stored texts were
    (``WordVectors``: the model's vectors would be near none of them): recall of the top 300
    rows by cosine of each matrix, of the rows each vector stream returns (those above its
    similarity floor), and of the top 10 hits of a whole search (``Retriever.answer``)."""
    from ai_memory.retrieval.search import Query, Retriever
    from ai_memory.retrieval.vectors import VectorIndex, nearest
    from ai_memory.store.connection import open_read_connection

    embedder = CachedVectors(words)
    conn = open_read_connection(db)
    fast, exact = VectorIndex(MODEL_ID, DIM), VectorIndex(MODEL_ID, DIM, exact_rows=2**62)
    engines = [Retriever(embedder, index, ready=lambda: True) for index in (fast, exact)]
    found: dict[str, list[float]] = {}

    def overlap(name: str, got: list[Any], want: list[Any]) -> None:
        if want:
            found.setdefault(name, []).append(len(set(got) & set(want)) / len(want))

    try:
        matrices = {"chunks": (fast.chunk_matrix, exact.chunk_matrix),
                    "observations": (fast.observation_matrix, exact.observation_matrix),
                    "sentences": (fast.sentence_matrix, exact.sentence_matrix)}
        rows = {name: len(f(conn).keys) for name, (f, _) in matrices.items()}
        kinds = {name: type(f(conn).matrix).__name__ for name, (f, _) in matrices.items()}
        for item in queries:
            qvec = words(item["q"])
            for name, (f, e) in matrices.items():
                overlap(f"{name} top-300", nearest(f(conn), qvec, 300)[0].tolist(),
                        nearest(e(conn), qvec, 300)[0].tolist())
            overlap("vector stream pages", [p for p, _ in fast.search_pages(conn, qvec)],
                    [p for p, _ in exact.search_pages(conn, qvec)])
            overlap("vector stream turns", [r for r, _, _ in fast.search_observations(conn, qvec, 400)],
                    [r for r, _, _ in exact.search_observations(conn, qvec, 400)])
            hits = [[h.get("path") or h.get("id") for h in engine.answer(conn, Query(item["q"], item["project"])).hits]
                    for engine in engines]
            overlap("final top-10 hits", hits[0], hits[1])
    finally:
        conn.close()
    return {"rows": rows, "matrices": kinds, **{name: round(float(np.mean(v)), 4) for name, v in found.items()},
            "queries": len(queries), "with_vector_stream_pages": len(found.get("vector stream pages", [])),
            "with_vector_stream_turns": len(found.get("vector stream turns", []))}


QUIET_PCT, QUIET_WINDOW_S, QUIET_LIMIT_S = 5.0, 5.0, 300.0


def quiet(pid: int) -> float:
    """Seconds until the daemon's processes use under QUIET_PCT of a core over a window: what
    the sample's sessions left to do (their pages compiled, committed and embedded, a WAL
    checkpoint) runs first, so "idle" latency is measured idle (at most QUIET_LIMIT_S)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < QUIET_LIMIT_S and cpu_percent(pid, QUIET_WINDOW_S) >= QUIET_PCT:
        pass
    return round(time.monotonic() - t0, 1)


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


def prompt_recalls(client: Client, queries: list[dict[str, Any]], calls: int) -> dict[str, float]:
    """``POST /v1/recall`` as the prompt hook sends it (the payload, a new session each time, so
    each is recorded as handed over), the daemon idle: what prompt recall costs the daemon."""
    ms = []
    for i, item in enumerate((queries * (calls // max(len(queries), 1) + 1))[:calls]):
        body = {"prompt": f"how did we handle {item['q']} last time?", "session_id": f"recall-{i}",
                "cwd": f"/home/dev/{item['project']}", "hook_event_name": "UserPromptSubmit"}
        t0 = time.perf_counter()
        status, _ = client.call("POST", f"/v1/recall?agent=claude&format=hook&project={item['project']}", body)
        assert status == 200
        ms.append((time.perf_counter() - t0) * 1000)
    return percentiles(ms)


ROWS = (
    ("pages", lambda r: r["pages"]),
    ("observations", lambda r: r["sizes"]["observations"]),
    ("offline: observations stored /s", lambda r: r["build"].get("observations_per_s", 0)),
    ("offline: build s", lambda r: r["build"].get("build_s", 0)),
    ("daemon start until settled s", lambda r: r["start_s"]),
    ("/hook: events/s while searching", lambda r: r["ingest"]["per_s"]),
    ("/hook: query p95 meanwhile ms", lambda r: r["ingest"]["query_while_ingesting_ms"]["p95"]),
    ("query p50 idle ms", lambda r: r["query_idle_ms"]["p50"]),
    ("query p95 idle ms", lambda r: r["query_idle_ms"]["p95"]),
    ("query p50 under burst ms", lambda r: r["query_burst_ms"]["p50"]),
    ("query p95 under burst ms", lambda r: r["query_burst_ms"]["p95"]),
    ("briefing p95 ms", lambda r: r["briefing_ms"]["p95"]),
    ("prompt recall p50 ms", lambda r: r["prompt_recall_ms"]["p50"]),
    ("prompt recall p95 ms", lambda r: r["prompt_recall_ms"]["p95"]),
    ("reindex s", lambda r: r["reindex_s"]),
    ("reindex peak RSS MB", lambda r: r["reindex_peak_rss_mb"]),
    ("vectors linked again after s", lambda r: r["relinked_after_reindex_s"] or 0),
    ("RSS settled MB", lambda r: r["rss_settled_mb"]),
    ("RSS after the burst MB", lambda r: r["rss_before_reindex_mb"]),
    ("peak RSS over the run MB", lambda r: r["peak_rss_mb"]),
    ("database MB", lambda r: r["sizes"]["db_mb"]),
    ("vectors", lambda r: r["sizes"]["vectors"]),
    ("vectors MB (float32 in SQLite)", lambda r: r["sizes"]["vectors_mb"]),
    ("piece vectors MB", lambda r: r["sizes"]["piece_vectors_mb"]),
    ("recall: chunks top-300", lambda r: r["recall"].get("chunks top-300", 0)),
    ("recall: observations top-300", lambda r: r["recall"].get("observations top-300", 0)),
    ("recall: sentences top-300", lambda r: r["recall"].get("sentences top-300", 0)),
    ("recall: final top-10 hits", lambda r: r["recall"].get("final top-10 hits", 0)),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, action="append", help="repeatable: 10000, 100000")
    parser.add_argument("--observations-per-page", type=float, default=10.0)
    parser.add_argument("--hook-sessions", type=int, default=40, help="sessions posted through /hook")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--burst-seconds", type=float, default=30.0)
    parser.add_argument("--json", type=Path)
    kept = parser.add_mutually_exclusive_group()
    kept.add_argument("--keep", type=Path, help="build the data dirs under KEEP/p<N> and leave them there"
                      " (to profile searches at that size afterwards; a 100k build takes 15-40 minutes)")
    kept.add_argument("--reuse", type=Path, help="measure the data dirs an earlier --keep left in REUSE/p<N>"
                      " (no build: its figures print as 0)")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or args.reuse or Path(tmp)
        for pages in sorted(args.pages or [10000]):
            if args.reuse and not (work / f"p{pages}" / "data").is_dir():
                sys.exit(f"{work / f'p{pages}' / 'data'} is not a data dir an earlier --keep left")
            if not args.reuse and (work / f"p{pages}").exists():
                sys.exit(f"{work / f'p{pages}'} exists: give --keep a new directory")
            print(f"{pages:,} pages, {args.observations_per_page:g} observations a page", flush=True)
            results.append(run_size(pages, args.observations_per_page, args.hook_sessions, args.queries,
                                    args.burst_seconds, work, reuse=bool(args.reuse)))
            if args.json:
                args.json.write_text(json.dumps(results, indent=2))
    print("\n=== scale " + "=" * 70)
    print(f"{'':<34}" + "".join(f"{r['pages']:>14,}" for r in results) + ("       ratio" if len(results) > 1 else ""))
    for label, get in ROWS:
        values = [get(r) for r in results]
        ratio = f"{values[-1] / values[0]:>12.2f}" if len(values) > 1 and values[0] else ""
        print(f"{label:<34}" + "".join(f"{v:>14,}" for v in values) + ratio)
    for r in results:
        print(f"{r['pages']:,} pages, fast vector path against the exact one: {r['recall']}")
    print("offline: rows stored by the builder (sanitizer + writer, no HTTP); /hook: through the daemon's HTTP")
    print("goals at 100k pages: " + ", ".join(f"{k} <= {v:g}" for k, v in GOALS.items()))


if __name__ == "__main__":
    main()
