"""Idle cost: the CPU a daemon with a big wiki uses when nobody calls it, minute by minute.

    python benchmarks/idle.py [--pages 10000] [--hooks 300] [--windows 3] [--window-seconds 60]

A daemon of this tree (model on, in its one process) starts on a fresh data dir;
``--pages`` pages (``benchmarks/query.py``'s generator, page vectors seeded by content hash as
in ``footprint.py``) are moved into ``wiki/`` and ``--hooks`` hook events posted. Once every
page is indexed and every vector stored, the CPU of the daemon and every process it started is
measured over ``--windows`` consecutive windows, with the number of full reconciles each one
ran (``wiki.reconciles`` in status) and the threads that used the most. The first window still
holds the one-off work that follows a bulk arrival (the commit of the moved files, their
history); the later ones are what an idle daemon costs. Goal: < 1 % of a core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from footprint import cpu_seconds, fill_page_vectors, settled, tree, wait_status  # noqa: E402
from query import Client, free_port, generate, hook_payload, post_hooks, wait_up  # noqa: E402

GOAL_PCT = 1.0


def thread_cpu(pid: int) -> dict[tuple[int, int], float]:
    """CPU seconds of every thread of the process tree, by (pid, tid)."""
    found = {}
    tick = os.sysconf("SC_CLK_TCK")
    for proc in tree(pid):
        try:
            tasks = list(Path(f"/proc/{proc}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[(proc, int(task.name))] = (int(fields[11]) + int(fields[12])) / tick
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--hooks", type=int, default=300)
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--window-seconds", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data, staged = work / "data", work / "staged"
        generate(staged / "wiki", args.pages)
        (staged / "db").mkdir(parents=True)
        print(f"{fill_page_vectors(staged, data / 'db' / 'memory.sqlite'):,} page vectors seeded", flush=True)
        port = free_port()
        env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "AI_MEMORY_SESSIONS_IDLE_MINUTES": "600",
               "HF_HUB_OFFLINE": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)], env=env,
                                cwd=REPO, stderr=subprocess.DEVNULL)
        try:
            wait_up(port, data / "token", proc)
            client = Client(port, (data / "token").read_text().strip())
            wait_status(client, settled(0), 600, "the model and the workers")
            t0 = time.monotonic()
            for folder in (staged / "wiki").iterdir():
                os.rename(folder, data / "wiki" / folder.name)
            asyncio.run(post_hooks(port, client.token, [hook_payload(random.Random(3), i) for i in range(args.hooks)],
                                   16))
            wait_status(client, settled(args.pages), 3600, f"{args.pages} pages indexed and embedded")
            print(f"{args.pages:,} pages and {args.hooks} hooks indexed and embedded in "
                  f"{time.monotonic() - t0:.0f} s", flush=True)
            idle = []
            for window in range(args.windows):
                before, c0, r0 = thread_cpu(proc.pid), cpu_seconds(proc.pid), reconciles(client)
                t0 = time.monotonic()
                time.sleep(args.window_seconds)
                seconds = time.monotonic() - t0
                pct = (cpu_seconds(proc.pid) - c0) / seconds * 100
                after = thread_cpu(proc.pid)
                top = sorted(after, key=lambda k: before.get(k, 0) - after[k])[:3]
                busiest = ", ".join(f"{p}/{t} {(after[(p, t)] - before.get((p, t), 0)) / seconds * 100:.2f} %"
                                    for p, t in top)
                print(f"window {window + 1}: CPU {pct:.2f} % of a core over {seconds:.0f} s, "
                      f"{reconciles(client) - r0} reconciles; busiest threads {busiest}", flush=True)
                idle.append(pct)
            client.close()
        finally:
            proc.terminate()
            proc.wait(timeout=120)
    steady = idle[1:] or idle
    verdict = "met" if max(steady) < GOAL_PCT else "NOT met"
    print(f"idle CPU at {args.pages:,} pages after the first window: max {max(steady):.2f} % "
          f"(goal < {GOAL_PCT} %: {verdict})")


def reconciles(client: Client) -> int:
    return int(client.call("GET", "/status")[1]["wiki"]["reconciles"])


if __name__ == "__main__":
    main()
