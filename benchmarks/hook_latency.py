"""Hook client wall time, as an agent sees it: daemon up, port closed, daemon hung.

    python benchmarks/hook_latency.py [--runs 200] [--json OUT]

Spawns the real hook clients as processes with a realistic PostToolUse payload and prints
p50/p95/p99 wall milliseconds for the shell client (hooks/ai-memory-hook, what install-hooks
installs) and the Python client (ai-memory hook), and each client's p95 with the daemon hung as
a ratio of the budget an agent's hook gets (BUDGET_MS, Python start-up included).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAYLOAD = json.dumps({
    "session_id": "5f0c2a9e-7d3b-4e1a-9b2c-1f4e8d6a3c10", "hook_event_name": "PostToolUse",
    "cwd": "/home/dev/acme-api", "tool_name": "Edit", "tool_use_id": "toolu_01",
    "tool_input": {"file_path": "/home/dev/acme-api/app/auth.py", "old_string": "TOKEN_TTL = 300",
                   "new_string": "TOKEN_TTL = 900"},
    "tool_response": {"filePath": "/home/dev/acme-api/app/auth.py", "success": True, "structuredPatch": "x" * 600},
})
VENV_CLI = REPO / ".venv" / "bin" / "ai-memory"
BUDGET_MS = 200.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clients() -> dict[str, list[str]]:
    python_cli = [str(VENV_CLI)] if VENV_CLI.exists() else [sys.executable, "-m", "ai_memory.cli"]
    return {"shell": [str(REPO / "hooks" / "ai-memory-hook"), "codex"],
            "python": python_cli + ["hook", "--agent", "codex"]}


def measure(cmd: list[str], env: dict[str, str], runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, input=PAYLOAD.encode(), stdout=subprocess.DEVNULL, env=env, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    pick = lambda q: round(times[min(len(times) - 1, int(len(times) * q))], 2)  # noqa: E731
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": pick(0.95), "p99_ms": pick(0.99),
            "max_ms": round(times[-1], 2), "runs": runs}


class Hung:
    def __init__(self, port: int) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(4096)
        self.held: list[socket.socket] = []
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for c in self.held:
            c.close()


def wait_healthy(port: int) -> None:
    for _ in range(400):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                if b"200" in s.recv(100):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("daemon did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data, port = Path(tmp) / "data", free_port()
        env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "AI_MEMORY_PORT": str(port)}
        daemon = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)],
                                  env=env, cwd=REPO, stderr=subprocess.DEVNULL)
        try:
            wait_healthy(port)
            for name, cmd in clients().items():
                results.setdefault(name, {})["daemon up"] = measure(cmd, env, args.runs)
        finally:
            daemon.terminate()
            daemon.wait()
        for name, cmd in clients().items():
            results[name]["port closed"] = measure(cmd, env, args.runs)
            shutil.rmtree(data / "spool", ignore_errors=True)
        hung = Hung(port)
        try:
            for name, cmd in clients().items():
                results[name]["daemon hung"] = measure(cmd, env, args.runs)
        finally:
            hung.close()
    for name, by_condition in results.items():
        for condition, m in by_condition.items():
            print(f"{name:>6} client, {condition:<11}: p50 {m['p50_ms']:6.2f} ms  p95 {m['p95_ms']:6.2f} ms  "
                  f"p99 {m['p99_ms']:6.2f} ms  max {m['max_ms']:6.2f} ms  ({m['runs']} runs)")
    for name, by_condition in results.items():
        p95 = by_condition["daemon hung"]["p95_ms"]
        print(f"{name:>6} client, daemon hung: p95 {p95:.2f} ms = {p95 / BUDGET_MS:.2f} x the {BUDGET_MS:.0f} ms budget")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
