"""What optional LLM consolidation adds to a session end, and that the hook path is unchanged.

    python benchmarks/llm_consolidation.py [--sessions 40] [--json OUT]

Runs the same sessions (six hook events each, the last a SessionEnd) through a real daemon
without ``[llm]`` and through one whose provider is the test suite's stub (an OpenAI-compatible
server that answers at once with two memories), and prints:

- the hook's acknowledgement time (``POST /hook``, p50/p95) in both, and their ratio: the
  worker runs beside the hooks and must not slow them (the hook clients themselves are not
  touched by ``[llm]`` at all);
- the session end's compile time (SessionEnd acknowledged → session page indexed) in both:
  the job is queued inside that transaction;
- the added cost of consolidation per session end, with the model's own time excluded: the
  daemon's CPU seconds per session (with minus without), and, session by session, the time from
  the page being compiled to its job being done (lease, validation, two memories through the
  duplicate guard, the page rewrite and their git commits).

Embeddings are off in both daemons (the duplicate guard then compares normalized text only).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from harness import Daemon, latency_summary  # noqa: E402
from llm_stub import StubServer  # noqa: E402

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")


def _payload(event: str, session: str, n: int) -> dict:
    base = {"session_id": session, "hook_event_name": event, "cwd": "/home/dev/acme-api"}
    if event == "UserPromptSubmit":
        base["prompt"] = f"Fix the flaky login test number {n} by waiting for the session cookie"
    if event in ("PreToolUse", "PostToolUse"):
        base.update(tool_name="Edit", tool_use_id=f"toolu_{n}",
                    tool_input={"file_path": f"/home/dev/acme-api/tests/test_login_{n}.py",
                                "old_string": "sleep(1)", "new_string": "wait_for_cookie()"})
    if event == "Stop":
        base["last_assistant_message"] = f"Replaced the sleep in test {n} with a wait for the cookie."
    return base


def _proposal(prompt: str) -> dict:
    """Two memories that differ per session (the prompt names its test), so none is a duplicate."""
    tag = str(abs(hash(prompt)) % 10**8)
    return {"summary": "Replaced a fixed sleep with a wait for the session cookie.", "memories": [
        {"kind": "gotcha", "title": f"Login test {tag} races the cookie",
         "text": f"Test {tag} must wait for the session cookie; a fixed sleep flakes."},
        {"kind": "procedure", "title": f"Deflaking test {tag}",
         "text": f"Run test {tag} fifty times with -x after replacing sleeps with waits."}]}


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait(predicate, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.002)
    raise RuntimeError("timed out")


def run(sessions: int, llm_env: dict[str, str] | None, label: str) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"bench-llm-{label}-") as tmp:
        data = Path(tmp) / "data"
        env = {"AI_MEMORY_EMBED_ENABLED": "0", **(llm_env or {})}
        daemon = Daemon(data, env=env)
        db = sqlite3.connect(data / "db" / "memory.sqlite")
        hooks, compiles, jobs = [], [], []
        try:
            cpu0 = _cpu_s(daemon.proc.pid)
            for n in range(sessions):
                session = f"bench-{label}-{n}"
                for event in EVENTS:
                    t0 = time.perf_counter()
                    status, _ = daemon.call("POST", "/hook?agent=claude", _payload(event, session, n))
                    hooks.append((time.perf_counter() - t0) * 1000)
                    assert status == 202, status
                t0 = time.perf_counter()
                _wait(lambda: db.execute("SELECT page_path FROM sessions WHERE id = ?", (session,)).fetchone()[0])
                compiled = time.perf_counter()
                compiles.append((compiled - t0) * 1000)
                if llm_env:
                    _wait(lambda: (db.execute("SELECT state FROM llm_jobs WHERE session_id = ?", (session,))
                                   .fetchone() or [None])[0] in ("done", "failed"))
                    jobs.append((time.perf_counter() - compiled) * 1000)
            cpu = _cpu_s(daemon.proc.pid) - cpu0
            states = dict(db.execute("SELECT state, count(*) FROM llm_jobs GROUP BY state").fetchall()) \
                if llm_env else {}
        finally:
            db.close()
            daemon.stop()
    return {"hook_ack_ms": latency_summary(hooks), "compile_ms": latency_summary(compiles),
            "job_ms": latency_summary(jobs), "cpu_s_per_session": round(cpu / sessions, 4), "jobs": states}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    stub = StubServer()
    stub.model.default_consolidation = _proposal
    try:
        off = run(args.sessions, None, "off")
        on = run(args.sessions, {"AI_MEMORY_LLM_PROVIDER": "openai", "AI_MEMORY_LLM_BASE_URL": stub.url + "/v1",
                                 "AI_MEMORY_LLM_MODEL": "stub-model"}, "on")
    finally:
        stub.close()
    result = {"sessions": args.sessions, "off": off, "on": on,
              "hook_p50_ratio": round(on["hook_ack_ms"]["p50"] / off["hook_ack_ms"]["p50"], 3),
              "hook_p95_ratio": round(on["hook_ack_ms"]["p95"] / off["hook_ack_ms"]["p95"], 3),
              "added_cpu_ms_per_session_end": round((on["cpu_s_per_session"] - off["cpu_s_per_session"]) * 1000, 1)}
    print(f"sessions: {args.sessions} (6 hook events each), stub model answering at once")
    for name in ("off", "on"):
        r = result[name]
        print(f"[llm] {name:3}: hook ack p50 {r['hook_ack_ms']['p50']} ms, p95 {r['hook_ack_ms']['p95']} ms;"
              f" session end → page p50 {r['compile_ms']['p50']} ms, p95 {r['compile_ms']['p95']} ms;"
              f" daemon CPU {r['cpu_s_per_session'] * 1000:.1f} ms per session")
    print(f"hook path: ack p50 ratio on/off {result['hook_p50_ratio']}, p95 ratio {result['hook_p95_ratio']}")
    print(f"added per session end: {result['added_cpu_ms_per_session_end']} ms of daemon CPU;"
          f" page compiled → job done p50 {on['job_ms']['p50']} ms, p95 {on['job_ms']['p95']} ms"
          f" (jobs: {on['jobs']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
