"""Hostile bodies: the daemon's memory and /health latency while parallel JSON bombs arrive.

    python benchmarks/hostile_bodies.py [--baseline 21c539d] [--commit HEAD] [--trees this,baseline]
        [--parallel 8] [--rounds 20] [--json OUT]

For each tree (``this``: ``--commit``; ``baseline``: ``--baseline``, the tree before the body
limits; each from ``git archive``, so the run measures committed code), in one run: a daemon
starts on an empty data dir (no model, no query worker: the daemon's own memory is measured),
a team user is added (``ai-memory user add``), and a few ordinary hooks settle it. Then
``--rounds`` attacks, each ``--parallel`` requests at once with the team user's token, cycling
through these bodies (issue 39, item 2):

- ``hook-arrays-9.9MB``: ``POST /hook``, a payload whose ``x`` is 9.9 MB of ``[],``
- ``hook-objects-9.9MB``: the same of ``{},``
- ``batch-arrays-9.9MB``: ``POST /hook/batch``, one such payload in a list
- ``hook-arrays-1MB``: ``POST /hook``, just under this tree's byte limit for an event (1 MiB),
  which only the count of JSON values refuses

Meanwhile one client, a process of its own, asks ``GET /health`` in a loop (5 ms after each
answer) and the daemon's RSS is read from ``/proc`` every 10 ms. Printed per tree: the answers'
statuses, RSS before, its peak during the attacks and 2 s after, /health p50/p99/max during them
(and over 1 s before them, for scale).
Goal: RSS grows by < 50 MB, /health p99 < 50 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from footprint import tree_of  # noqa: E402
from query import free_port, wait_up  # noqa: E402

GOAL_RSS_MB = 50.0
GOAL_HEALTH_P99_MS = 50.0
BOMB_BYTES = 9_900_000
UNDER_EVENT_LIMIT = (1 << 20) - 1024


def _payload_with(filler: bytes, size: int) -> bytes:
    head, tail = b'{"session_id": "bomb", "hook_event_name": "Stop", "x": [', b"[]]}"
    return head + filler * ((size - len(head) - len(tail)) // len(filler)) + tail


def bodies() -> list[tuple[str, str, bytes]]:
    """(name, path, body) of each hostile body, built once."""
    arrays = _payload_with(b"[],", BOMB_BYTES)
    return [
        ("hook-arrays-9.9MB", "/hook?agent=claude", arrays),
        ("hook-objects-9.9MB", "/hook?agent=claude", _payload_with(b"{},", BOMB_BYTES)),
        ("batch-arrays-9.9MB", "/hook/batch?agent=claude", b"[" + arrays[:-1] + b"}]"),
        ("hook-arrays-1MB", "/hook?agent=claude", _payload_with(b"[],", UNDER_EVENT_LIMIT)),
    ]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def post(port: int, token: str, path: str, body: bytes) -> str:
    """The answer's status, or what stopped the exchange (the daemon may close before reading it all)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("POST", path, body=body, headers={"Authorization": f"Bearer {token}",
                                                       "Content-Type": "application/json"})
        return str(conn.getresponse().status)
    except (BrokenPipeError, ConnectionResetError):
        return "closed"
    finally:
        conn.close()


def ping_health(port: int, stop: Any, out: Any) -> None:
    """In a process of its own (the senders' threads would otherwise hold its GIL): GET /health in
    a loop, each latency in ms put on ``out`` at the end."""
    conn, seen = http.client.HTTPConnection("127.0.0.1", port, timeout=60), []
    while not stop.is_set():
        t0 = time.perf_counter()
        conn.request("GET", "/health")
        conn.getresponse().read()
        seen.append((time.perf_counter() - t0) * 1000)
        stop.wait(0.005)
    conn.close()
    out.put(seen)


class Watch:
    """/health latencies (from another process) and peak RSS (a thread), until stopped."""

    def __init__(self, port: int, pid: int) -> None:
        self.pid = pid
        self.health_ms: list[float] = []
        self.peak_mb = rss_mb(pid)
        self._stop, self._out = mp.Event(), mp.Queue()
        self._pinger = mp.Process(target=ping_health, args=(port, self._stop, self._out), daemon=True)
        self._sampler = threading.Thread(target=self._rss, daemon=True)

    def __enter__(self) -> "Watch":
        self._pinger.start()
        self._sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.health_ms = self._out.get(timeout=120)
        self._pinger.join()
        self._sampler.join()

    def _rss(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, rss_mb(self.pid))
            self._stop.wait(0.01)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1) if ordered else 0.0


def measure(name: str, tree_dir: Path, work: Path, parallel: int, rounds: int) -> dict[str, Any]:
    data, port = work / name / "data", free_port()
    env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "AI_MEMORY_EMBED_ENABLED": "0",
           "PYTHONPATH": str(tree_dir)}
    env.pop("AI_MEMORY_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)], env=env,
                            cwd=tree_dir, stderr=subprocess.DEVNULL)
    try:
        wait_up(port, data / "token", proc)
        added = subprocess.run([sys.executable, "-m", "ai_memory.cli", "user", "add", "mallory", "--json"],
                               env={**env, "AI_MEMORY_URL": f"http://127.0.0.1:{port}"}, cwd=tree_dir,
                               check=True, capture_output=True, text=True)
        token = json.loads(added.stdout)["token"]
        for i in range(20):  # the ordinary path warmed: what a hook costs is not counted as growth
            post(port, token, "/hook?agent=claude", json.dumps(
                {"session_id": "warm", "hook_event_name": "UserPromptSubmit", "prompt": f"warm up {i}"}).encode())
        time.sleep(2.0)
        with Watch(port, proc.pid) as idle:  # /health with nothing else to do, for scale
            time.sleep(1.0)
        before = rss_mb(proc.pid)
        sent = bodies()
        statuses: dict[str, dict[str, int]] = {n: {} for n, _, _ in sent}
        t0 = time.perf_counter()
        with Watch(port, proc.pid) as watch, ThreadPoolExecutor(parallel) as pool:
            for _ in range(rounds):
                jobs = [(sent[i % len(sent)], pool.submit(post, port, token, sent[i % len(sent)][1],
                                                          sent[i % len(sent)][2])) for i in range(parallel)]
                for (kind, _, _), job in jobs:
                    got = job.result()
                    statuses[kind][got] = statuses[kind].get(got, 0) + 1
        attack_s = time.perf_counter() - t0
        time.sleep(2.0)
        out = {"tree": name, "rss_before_mb": round(before, 1), "rss_peak_mb": round(watch.peak_mb, 1),
               "rss_after_mb": round(rss_mb(proc.pid), 1), "growth_mb": round(watch.peak_mb - before, 1),
               "attack_s": round(attack_s, 1), "health_n": len(watch.health_ms),
               "idle_health_p50_ms": _pct(idle.health_ms, 0.5), "idle_health_p99_ms": _pct(idle.health_ms, 0.99),
               "health_p50_ms": _pct(watch.health_ms, 0.5), "health_p99_ms": _pct(watch.health_ms, 0.99),
               "health_max_ms": round(max(watch.health_ms, default=0.0), 1),
               "health_mean_ms": round(statistics.fmean(watch.health_ms), 1) if watch.health_ms else 0.0,
               "statuses": statuses}
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    print(f"  [{name}] {json.dumps(out)}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="21c539d", help="the commit before the body limits")
    parser.add_argument("--commit", default="HEAD", help="the commit measured as this")
    parser.add_argument("--trees", default="this,baseline")
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.commit], check=True,
                            capture_output=True, text=True).stdout.strip()
    print(f"this: {commit}; baseline: {args.baseline}; {args.parallel} parallel bodies, {args.rounds} rounds", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in args.trees.split(","):
            tree = tree_of(commit if name == "this" else args.baseline, work / f"tree-{name}")
            results.append(measure(name, tree, work, args.parallel, args.rounds))
    print(f"\n=== hostile bodies (goal: RSS growth < {GOAL_RSS_MB:.0f} MB, /health p99 < {GOAL_HEALTH_P99_MS:.0f} ms) ===")
    print(f"{'tree':<10}{'RSS before':>11}{'peak':>8}{'after':>8}{'growth':>8}{'attack s':>10}"
          f"{'health p50':>12}{'p99':>8}{'max':>8}   (MB, ms)")
    for r in results:
        print(f"{r['tree']:<10}{r['rss_before_mb']:>11.0f}{r['rss_peak_mb']:>8.0f}{r['rss_after_mb']:>8.0f}"
              f"{r['growth_mb']:>8.0f}{r['attack_s']:>10.1f}{r['health_p50_ms']:>12.1f}{r['health_p99_ms']:>8.1f}"
              f"{r['health_max_ms']:>8.1f}")
    for r in results:
        print(f"{r['tree']}: /health before the attacks p50 {r['idle_health_p50_ms']} ms, p99 {r['idle_health_p99_ms']} ms")
    for r in results:
        print(f"{r['tree']}: answers " + "; ".join(f"{k} {v}" for k, v in r["statuses"].items()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
