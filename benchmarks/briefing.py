"""Briefing latency: POST /v1/briefing (SessionStart) on a wiki of 10,000 pages.

    python benchmarks/briefing.py [--pages 10000] [--calls 300] [--json OUT]

1. Writes ``--pages`` generated pages (the generator of benchmarks/query.py: 20 projects, six
   families) with every 20th rule or decision pinned, plus 40 ``_global`` preferences, before
   the daemon starts (embeddings off: the briefing has no model on its path).
2. Posts sessions through /hook (10 per project, 6 prompts each), a message and a manual
   handoff per project, so every section of the briefing has content.
3. Calls the briefing from one keep-alive client, each time as a new session in one of the
   projects' directories (so each call claims through the writer, like a real SessionStart),
   and prints p50/p95/p99 against the target p95 <= 100 ms, and the largest briefing's size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from query import PROJECTS, Client, free_port, generate, summarize_ms, wait_up  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TARGET_P95_MS = 100.0


def pin_some(wiki: Path, specs: list[dict]) -> int:
    """Pin every 20th rule or decision (a frontmatter edit, as a person would make it)."""
    chosen = [s for s in specs if s["kind"] in ("Decision", "Rule")][::20]
    for s in chosen:
        page = wiki / s["rel"]
        page.write_text(page.read_text().replace("---\n", "---\npinned: true\n", 1))
    return len(chosen)


def global_preferences(wiki: Path, n: int = 40) -> None:
    folder = wiki / "_global" / "preferences"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"pref-{i}.md").write_text(
            f"---\ntype: Preference\ntitle: Preference {i}\nproject: _global\n---\n"
            f"Prefer option {i} when choosing between equivalent tools.\n")


def wait_indexed(client: Client, pages: int, limit_s: float = 1800.0) -> float:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        status, body = client.call("GET", "/status")
        if status == 200 and body["counts"]["pages"] >= pages:
            return time.perf_counter() - t0
        time.sleep(0.5)
    raise RuntimeError("pages were not indexed in time")


def populate(client: Client, work: Path) -> None:
    """Sessions, messages and handoffs for every project, through the public HTTP API."""
    for p, project in enumerate(PROJECTS):
        cwd = str(work / project)
        for s in range(10):
            sid = f"bench-{project}-{s}"
            for k in range(6):
                client.call("POST", "/hook?agent=claude", {"session_id": sid, "cwd": cwd,
                                                           "hook_event_name": "UserPromptSubmit",
                                                           "prompt": f"step {k} of task {s} in {project}"})
        client.call("POST", "/v1/messages", {"to_project": project, "from_project": PROJECTS[p - 1],
                                             "body": f"{PROJECTS[p - 1]} changed its API; check the client"})
        client.call("POST", "/v1/handoffs", {"cwd": cwd, "summary": f"Half-way through the {project} refactor",
                                             "next_steps": ["finish the tests", "update the docs"]})


def measure(client: Client, work: Path, calls: int) -> tuple[list[float], int, dict]:
    latencies, largest, sample = [], 0, {}
    for i in range(calls):
        cwd = str(work / PROJECTS[i % len(PROJECTS)])
        t0 = time.perf_counter()  # a POST, as the hook sends it: it claims the handoff
        status, body = client.call("POST", "/v1/briefing?agent=codex", {"cwd": cwd, "session_id": f"brief-{i}"})
        latencies.append(time.perf_counter() - t0)
        if status != 200:
            raise RuntimeError(f"briefing failed: {status} {body}")
        largest = max(largest, len(body["text"]))
        if i == 0:
            sample = body
    return latencies, largest, sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aim-brief-") as tmp:
        data, work = Path(tmp) / "data", Path(tmp) / "work"
        for project in PROJECTS:
            (work / project).mkdir(parents=True)
        wiki = data / "wiki"
        t0 = time.perf_counter()
        specs = generate(wiki, args.pages)
        pinned = pin_some(wiki, specs)
        global_preferences(wiki)
        print(f"generated {args.pages} pages ({pinned} pinned) in {time.perf_counter() - t0:.1f} s")
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
        env.update(AI_MEMORY_DATA_DIR=str(data), AI_MEMORY_EMBED_ENABLED="0", HF_HUB_OFFLINE="1")
        log = open(Path(tmp) / "daemon.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)],
                                env=env, stdout=log, stderr=log, cwd=REPO)
        try:
            wait_up(port, data / "token", proc)
            client = Client(port, (data / "token").read_text().strip())
            print(f"indexed in {wait_indexed(client, args.pages):.1f} s")
            populate(client, work)
            latencies, largest, sample = measure(client, work, args.calls)
            client.close()
        finally:
            proc.terminate()
            proc.wait(timeout=120)
    figures = summarize_ms(latencies)
    verdict = "meets" if figures["p95"] <= TARGET_P95_MS else "MISSES"
    print(f"briefing over {args.pages} pages: p50 {figures['p50']} ms  p95 {figures['p95']} ms  "
          f"p99 {figures['p99']} ms  (n={figures['n']}; {verdict} the target p95 <= {TARGET_P95_MS:.0f} ms)")
    print(f"largest briefing: {largest} characters (bound 8000)")
    print("first briefing:\n" + sample.get("text", ""))
    if args.json:
        args.json.write_text(json.dumps({"pages": args.pages, "latency_ms": figures, "largest_chars": largest}, indent=2))


if __name__ == "__main__":
    main()
