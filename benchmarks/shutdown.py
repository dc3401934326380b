"""How long `ai-memory serve` takes to stop on SIGTERM, from the signal to the process's exit.

    python benchmarks/shutdown.py [--runs 3] [--json OUT]

Scenarios: embeddings off; embeddings on and stopped while the model and the query worker are
still loading (0.5 s after /health); embeddings on with the model loaded and idle. Each run is
a fresh daemon on a free port with its own temporary data dir. The target is 2 s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = {  # name → (embeddings on, seconds to wait after /health, wait for the model to load)
    "no embeddings": (False, 0.5, False),
    "model loading": (True, 0.5, False),
    "model loaded, idle": (True, 1.0, True),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str, token: str | None = None) -> dict | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        resp = conn.getresponse()
        return json.loads(resp.read() or b"null") if resp.status == 200 else None
    except OSError:
        return None
    finally:
        conn.close()


def one_stop(embed: bool, wait_s: float, loaded: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
        env.update(AI_MEMORY_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1", AI_MEMORY_EMBED_ENABLED="1" if embed else "0")
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
        try:
            deadline = time.monotonic() + 120
            while _get(port, "/health") is None:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the daemon did not start")
                time.sleep(0.05)
            token = (data_dir / "token").read_text().strip()
            while loaded and not ((_get(port, "/status", token) or {}).get("embeddings") or {}).get("ready"):
                if time.monotonic() > deadline:
                    raise RuntimeError("the model did not load")
                time.sleep(0.2)
            time.sleep(wait_s)
            t0 = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            return time.perf_counter() - t0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = {}
    for name, (embed, wait_s, loaded) in SCENARIOS.items():
        times = [one_stop(embed, wait_s, loaded) for _ in range(args.runs)]
        results[name] = {"median_s": round(statistics.median(times), 2), "max_s": round(max(times), 2),
                         "runs": args.runs}
        print(f"{name:>20}: median {results[name]['median_s']:.2f} s, max {results[name]['max_s']:.2f} s"
              f" over {args.runs} runs (target 2 s)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
