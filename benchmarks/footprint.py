"""Footprint: the resident memory of every ai-memory process, today's structure beside the new one.

    python benchmarks/footprint.py [--pages 10000] [--load-seconds 60 | --full] [--baseline 5391ada]
        [--structures this,baseline] [--real-page-vectors] [--hook-rate 20]

For each structure, in one run: a daemon starts on an empty data dir with the model on
(``this``: this tree, one process holding the model; ``baseline``: the tree of ``--baseline``
from ``git archive``, the daemon with torch in its model worker process). Then:

1. **start**: RSS (and PSS: shared pages counted once) of the daemon and each child once the
   model is loaded and the workers serve;
2. **after N pages**: ``--pages`` pages (``benchmarks/query.py``'s generator) land in ``wiki/``,
   the watcher indexes them, 2,000 hook events arrive, and every vector is stored;
3. **after the mixed load**: ``--load-seconds`` (``--full``: the issue's 10 minutes) of 32 hook
   clients beside a client searching one query after another; RSS sampled every 5 s, its
   spread reported (the goal: flat within ±10 %). The hooks come as fast as they are answered,
   or ``--hook-rate`` a second: a flood posts several times the memory's observations in 10
   minutes, so its memory grows with its data; a steady rate the daemon keeps up with (20 a
   second is a busy team's agents) tells a leak from growth;
4. **idle CPU**: the CPU all processes use over 20 s once everything is indexed and embedded,
   before the load (goal < 1 %; the lowest of up to six windows, as the first ones still hold
   the commit and history of the pages' arrival); after the load too if its embedding backlog drains within
   ``DRAIN_S`` (at 32 clients the load queues far more text than the model embeds in 10
   minutes: what is left is printed instead).

Page vectors: encoding 25,000 chunks takes hours on a shared 2-core machine, so unless
``--real-page-vectors`` the chunks' vectors are pseudo-random unit vectors keyed by content
hash, written before the daemon sees the pages (the daemon finds them by hash, as with
``--vectors-from`` in query.py). Their number, which is what memory depends on, is the real
one; hook observations are embedded by the real model.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from query import (  # noqa: E402
    HOOK_CLIENTS, Client, free_port, generate, hook_load, hook_payload, make_queries, post_hooks, wait_up,
)

GOAL_MB = 500.0
IDLE_S = 20.0
IDLE_WINDOWS = 6
DRAIN_S = 120.0  # how long the backlog the load left may take before idle CPU is left unmeasured
SETUP_HOOKS = 2000
MODEL_ID, DIM = "sentence-transformers/all-MiniLM-L6-v2", 384


def tree(pid: int) -> list[int]:
    """The process and all its descendants."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return found


def memory_of(pid: int) -> dict[str, Any]:
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    rollup = {line.split(":")[0]: line.split(":")[1] for line in
              Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]}
    kb = lambda text: int(text.split()[0])  # noqa: E731
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:60].strip()
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {"pid": pid, "cmd": cmd, "rss_mb": round(kb(status["VmRSS"]) / 1024, 1),
            "hwm_mb": round(kb(status["VmHWM"]) / 1024, 1), "pss_mb": round(kb(rollup["Pss"]) / 1024, 1),
            "torch": "libtorch" in maps}


def snapshot(pid: int) -> dict[str, Any]:
    procs = []
    for p in tree(pid):
        try:
            procs.append(memory_of(p))
        except (OSError, KeyError):
            pass
    return {"processes": procs, "rss_mb": round(sum(p["rss_mb"] for p in procs), 1),
            "pss_mb": round(sum(p["pss_mb"] for p in procs), 1), "torch_copies": sum(p["torch"] for p in procs)}


def cpu_seconds(pid: int) -> float:
    total = 0.0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


# The database made by the tree that will serve it: an older tree refuses a newer schema.
_SEED = """import sys
from ai_memory.store.connection import open_write_connection
from ai_memory.store.migrations import migrate
conn = open_write_connection(__import__("pathlib").Path(sys.argv[1]))
migrate(conn)
conn.execute("ATTACH DATABASE ? AS source", (sys.argv[2],))
with conn:
    conn.execute("INSERT OR IGNORE INTO embeddings(content_hash, model, dim, vector)"
                 " SELECT content_hash, model, dim, vector FROM source.embeddings")
print(conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
"""


def fill_page_vectors(staged: Path, db: Path, tree_dir: Path = REPO) -> int:
    """Pseudo-random unit vectors for every chunk of the pages in ``wiki/``, keyed by content
    hash, in a new database made by the code of ``tree_dir``."""
    from ai_memory.core.chunks import chunk_text, text_hash
    from ai_memory.core.page import parse_page

    cache = staged / "db" / "page-vectors.sqlite"
    conn = sqlite3.connect(cache)
    conn.execute("CREATE TABLE IF NOT EXISTS embeddings(content_hash TEXT, model TEXT, dim INTEGER, vector BLOB,"
                 " PRIMARY KEY(content_hash, model))")
    rows = []
    for path in (staged / "wiki").rglob("*.md"):
        page = parse_page(str(path.relative_to(staged / "wiki")), path.read_bytes())
        for chunk in chunk_text(page.title, page.body):
            digest = text_hash(chunk)
            v = np.random.default_rng(int(digest[:15], 16)).standard_normal(DIM).astype(np.float32)
            rows.append((digest, MODEL_ID, DIM, (v / np.linalg.norm(v)).tobytes()))
    with conn:
        conn.executemany("INSERT OR IGNORE INTO embeddings VALUES (?,?,?,?)", rows)
    conn.close()
    db.parent.mkdir(parents=True, exist_ok=True)
    seeded = subprocess.run([sys.executable, "-c", _SEED, str(db), str(cache)], cwd=tree_dir, check=True,
                            env={**os.environ, "PYTHONPATH": str(tree_dir)}, capture_output=True, text=True)
    return int(seeded.stdout.strip())


def tree_of(commit: str, into: Path) -> Path:
    """The commit's files (the run measures committed code, whatever the checkout does meanwhile)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for data in ("hooks", "data_template"):  # the package data; newer trees carry these links themselves
        link = into / "ai_memory" / data
        if not link.exists() and not link.is_symlink():
            link.symlink_to(into / data)
    return into


def wait_status(client: Client, ready: Any, limit_s: float, what: str) -> dict[str, Any]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        _, st = client.call("GET", "/status")
        if ready(st):
            return st
        time.sleep(0.5)
    raise RuntimeError(f"timed out waiting for {what}")


def settled(pages: int):
    def check(st: dict[str, Any]) -> bool:
        emb = st["embeddings"]
        workers = st.get("query_workers", {"configured": 0})
        return (st["counts"]["pages"] >= pages and emb.get("ready") and workers.get("ready", 0) >= workers["configured"]
                and emb.get("backlog") == {"chunks": 0, "observations": 0})
    return check


def idle_queries(client: Client, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Sequential searches through HTTP on the idle daemon, and what they found (compared across trees)."""
    latencies, tops = [], []
    for item in queries:
        t0 = time.perf_counter()
        status, answer = client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "k": 10})
        latencies.append((time.perf_counter() - t0) * 1000)
        assert status == 200, answer
        tops.append([h["path"] for h in answer["hits"]])
    ordered = sorted(latencies)
    return {"n": len(ordered), "p50_ms": round(ordered[len(ordered) // 2], 1),
            "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 1), "top10": tops}


def mixed_load(client: Client, port: int, pid: int, queries: list[dict[str, Any]], seconds: float,
               hook_rate: float = 0.0) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    started, stop, results = ctx.Event(), ctx.Event(), ctx.Queue()
    loader = ctx.Process(target=hook_load, args=(port, client.token, HOOK_CLIENTS, "embedded", started, stop, results,
                                                 hook_rate))
    loader.start()
    samples, latencies = [], []
    try:
        started.wait(60)
        t0 = last = time.monotonic()
        i = 0
        while time.monotonic() - t0 < seconds:
            item = queries[i % len(queries)]
            i += 1
            q0 = time.perf_counter()
            status, _ = client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "k": 10})
            latencies.append((time.perf_counter() - q0) * 1000)
            assert status == 200
            if time.monotonic() - last >= 5:
                samples.append(snapshot(pid)["rss_mb"])
                last = time.monotonic()
    finally:
        stop.set()
    hooks = results.get(timeout=60)
    loader.join(timeout=30)
    ordered = sorted(latencies)
    return {"seconds": seconds, "rss_samples_mb": samples, "hooks": hooks, "queries": len(latencies),
            "query_p50_ms": round(ordered[len(ordered) // 2], 1),
            "query_p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 1)}


def measure(name: str, tree_dir: Path, env_extra: dict[str, str], pages: int, load_s: float,
            real_vectors: bool, work: Path, hook_rate: float = 0.0) -> dict[str, Any]:
    data, port = work / name / "data", free_port()
    staged = work / name / "staged"
    specs = generate(staged / "wiki", pages)
    if not real_vectors:  # into the database before the daemon opens it: nothing writes beside its writer
        (staged / "db").mkdir(parents=True)
        count = fill_page_vectors(staged, data / "db" / "memory.sqlite", tree_dir)
        print(f"  [{name}] {count:,} page vectors seeded by content hash", flush=True)
    env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "AI_MEMORY_SESSIONS_IDLE_MINUTES": "600", **env_extra}
    env["PYTHONPATH"] = str(tree_dir)
    proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)], env=env,
                            cwd=tree_dir, stderr=subprocess.DEVNULL)
    out: dict[str, Any] = {"structure": name}
    try:
        wait_up(port, data / "token", proc)
        client = Client(port, (data / "token").read_text().strip())
        wait_status(client, settled(0), 600, "the model and the workers")
        out["start"] = snapshot(proc.pid)
        print(f"  [{name}] start: {fmt(out['start'])}", flush=True)
        t0 = time.monotonic()
        for folder in (staged / "wiki").iterdir():  # a folder moved: the watcher has the reconciler compare everything
            os.rename(folder, data / "wiki" / folder.name)
        asyncio.run(post_hooks(port, client.token, [hook_payload(random.Random(3), i) for i in range(SETUP_HOOKS)], 16))
        wait_status(client, settled(pages), 3600, f"{pages} pages indexed and embedded")
        out["index_s"] = round(time.monotonic() - t0, 1)
        out["after_pages"] = snapshot(proc.pid)
        print(f"  [{name}] after {pages:,} pages + {SETUP_HOOKS} hooks ({out['index_s']} s): "
              f"{fmt(out['after_pages'])}", flush=True)
        out["idle_cpu_pct"] = idle_cpu(proc.pid)
        print(f"  [{name}] idle CPU over {IDLE_S:.0f} s, everything indexed and embedded: "
              f"{out['idle_cpu_pct']} % of a core", flush=True)
        queries = make_queries(specs, 200)
        for item in make_queries(specs, 20, seed=99):  # warm
            client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "k": 10})
        out["idle_queries"] = idle_queries(client, queries)
        print(f"  [{name}] idle queries: " + str({k: v for k, v in out["idle_queries"].items() if k != "top10"}),
              flush=True)
        out["load"] = mixed_load(client, port, proc.pid, queries, load_s, hook_rate)
        out["after_load"] = snapshot(proc.pid)
        s = out["load"]["rss_samples_mb"] or [out["after_load"]["rss_mb"]]
        out["load"]["spread_pct"] = round((max(s) - min(s)) / statistics.fmean(s) * 100, 1)
        print(f"  [{name}] after {load_s:.0f} s mixed load ({out['load']['hooks']['accepted']:,} hooks, "
              f"{out['load']['queries']} queries, p95 {out['load']['query_p95_ms']} ms): {fmt(out['after_load'])}; "
              f"RSS over the load {min(s):.0f}–{max(s):.0f} MB ({out['load']['spread_pct']} %)", flush=True)
        try:  # the load queues more text than the model embeds in 10 minutes: bounded, reported
            wait_status(client, settled(pages), DRAIN_S, "the backlog after the load")
            out["idle_cpu_after_load_pct"] = idle_cpu(proc.pid)
        except RuntimeError:
            _, st = client.call("GET", "/status")
            out["backlog_after_load"] = st["embeddings"]["backlog"]
        print(f"  [{name}] after the load: idle CPU {out.get('idle_cpu_after_load_pct', '-')} % of a core; "
              f"embedding backlog still queued {DRAIN_S:.0f} s later: {out.get('backlog_after_load', 'none')}",
              flush=True)
        client.close()
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    return out


def cpu_percent(pid: int, seconds: float) -> float:
    """The CPU the process and its descendants use over the next ``seconds``, in % of one core."""
    c0, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return round((cpu_seconds(pid) - c0) / (time.monotonic() - t0) * 100, 2)


def idle_cpu(pid: int) -> float:
    """The CPU all the daemon's processes use over IDLE_S, in % of one core: the lowest of up to
    IDLE_WINDOWS windows, for right after the pages arrive the wiki's commit and page history of
    the arrivals still run (idle.py shows that first window apart)."""
    windows = []
    for _ in range(IDLE_WINDOWS):
        windows.append(cpu_percent(pid, IDLE_S))
        if windows[-1] < 1.0:
            break
    print(f"    CPU of {IDLE_S:.0f} s windows: {windows} % of a core", flush=True)
    return min(windows)


def fmt(snap: dict[str, Any]) -> str:
    parts = ", ".join(f"{p['cmd'].split(' -m ')[-1][:28] or p['pid']} {p['rss_mb']:.0f}" for p in snap["processes"])
    return (f"RSS {snap['rss_mb']:.0f} MB (PSS {snap['pss_mb']:.0f}) in {len(snap['processes'])} processes "
            f"[{parts}], torch loaded {snap['torch_copies']}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--load-seconds", type=float, default=60.0)
    parser.add_argument("--full", action="store_true", help="the issue's 10 minutes of mixed load")
    parser.add_argument("--baseline", default="5391ada", help="the commit of the structure compared with")
    parser.add_argument("--commit", default="HEAD", help="the commit measured as this")
    parser.add_argument("--structures", default="this,baseline")
    parser.add_argument("--real-page-vectors", action="store_true", help="encode every chunk with the model")
    parser.add_argument("--hook-rate", type=float, default=0.0,
                        help="hooks a second during the load, all clients together (0: as fast as answered)")
    args = parser.parse_args()
    load_s = 600.0 if args.full else args.load_seconds
    results = []
    args.commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.commit], check=True,
                                 capture_output=True, text=True).stdout.strip()
    print(f"this tree: {args.commit}; baseline: {args.baseline}", flush=True)
    trees: dict[str, Path] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in args.structures.split(","):
            commit = args.baseline if name == "baseline" else args.commit
            if commit not in trees:
                trees[commit] = tree_of(commit, work / f"tree-{commit}")
            env: dict[str, str] = {}  # each tree's defaults
            tree_dir = trees[commit]
            pace = f"{args.hook_rate:g} hooks/s" if args.hook_rate else "hooks as fast as answered"
            print(f"{name}: {args.pages:,} pages, {load_s:.0f} s mixed load ({pace})", flush=True)
            results.append(measure(name, tree_dir, env, args.pages, load_s, args.real_page_vectors, work,
                                   args.hook_rate))
    print(f"\n=== footprint (goal: all processes <= {GOAL_MB:.0f} MB RSS after {args.pages:,} pages, "
          f"flat within ±10 % under load, idle CPU < 1 %) ===")
    print(f"{'structure':<12}{'start':>9}{'pages':>9}{'load':>9}{'spread':>9}{'PSS':>8}{'torch':>7}{'idle CPU':>10}"
          f"{'q p95':>8}   (RSS MB of all processes)")
    for r in results:
        print(f"{r['structure']:<12}{r['start']['rss_mb']:>9.0f}{r['after_pages']['rss_mb']:>9.0f}"
              f"{r['after_load']['rss_mb']:>9.0f}{r['load']['spread_pct']:>8.1f}%{r['after_load']['pss_mb']:>8.0f}"
              f"{r['after_load']['torch_copies']:>6}×{r['idle_cpu_pct']:>9.2f}%{r['load']['query_p95_ms']:>8.1f}")
    for r in results:
        q = r["idle_queries"]
        print(f"{r['structure']}: idle /v1/query over {q['n']} queries at {args.pages:,} pages: "
              f"p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms")
    first = results[0]["idle_queries"]["top10"]
    for r in results[1:]:
        same = sum(a == b for a, b in zip(first, r["idle_queries"]["top10"]))
        print(f"{r['structure']} answers the same top 10 as {results[0]['structure']} for {same}/{len(first)} queries")
    base = next((r for r in results if r["structure"] == "baseline"), None)
    for r in results:
        if base is not None and r is not base:
            print(f"{r['structure']} / baseline RSS after the load: "
                  f"{r['after_load']['rss_mb'] / base['after_load']['rss_mb']:.2f}")


if __name__ == "__main__":
    main()
