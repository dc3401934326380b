"""How fast ``ai-memory mcp`` answers a host that just launched it: initialize, then tools/list.

    python benchmarks/mcp_start.py [--runs 40] [--json OUT]

Spawns the real server as a host does (the console script, a temporary data dir, no daemon
needed for the handshake) and prints p50/p95/max wall milliseconds from the spawn to the
``initialize`` answer and to the ``tools/list`` answer. The target: initialize within 300 ms
p95, so a host's first model request lists the tools.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV_CLI = REPO / ".venv" / "bin" / "ai-memory"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
TARGET_P95_MS = 300.0


def one_start(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    initialized = time.perf_counter()
    assert reply["id"] == 1 and "result" in reply, reply
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
                     b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
    proc.stdin.flush()
    tools = json.loads(proc.stdout.readline())
    listed = time.perf_counter()
    assert len(tools["result"]["tools"]) == 20, tools
    proc.stdin.close()
    proc.wait(timeout=60)
    return (initialized - t0) * 1000, (listed - t0) * 1000


def stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
            "max_ms": round(ordered[-1], 1), "runs": len(ordered)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    command = [str(VENV_CLI)] if VENV_CLI.exists() else [sys.executable, "-m", "ai_memory.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "AI_MEMORY_DATA_DIR": str(Path(tmp) / "data")}
        one_start(command + ["mcp"], env)  # warm the page cache once
        runs = [one_start(command + ["mcp"], env) for _ in range(args.runs)]
    result = {"initialize": stats([r[0] for r in runs]), "tools_list": stats([r[1] for r in runs])}
    for name, m in result.items():
        print(f"ai-memory mcp, spawn to {name:<10}: p50 {m['p50_ms']:6.1f} ms  p95 {m['p95_ms']:6.1f} ms  "
              f"max {m['max_ms']:6.1f} ms  ({m['runs']} runs)")
    verdict = "within" if result["initialize"]["p95_ms"] <= TARGET_P95_MS else "OVER"
    print(f"initialize p95 {verdict} the {TARGET_P95_MS:.0f} ms target")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
