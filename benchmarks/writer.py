"""Writer throughput: our group-commit writer against one-transaction-per-write, direct and over HTTP.

    python benchmarks/writer.py [--json OUT] [--commit-delay-ms N] [--writes N] [--skip-http]

Store-direct: 1, 8, 32 and 128 concurrent asyncio writers submit realistic ~1 KB observations
(FTS5 on, synchronous=FULL) to (a) our Writer and (b) a baseline writer thread that commits each
write in its own transaction, the leading system's design. ``--commit-delay-ms`` sleeps inside
every commit of both, to model a laptop disk whose fsync costs 5-25 ms.
Over HTTP: a real daemon subprocess and 1/8/32/128 keep-alive clients posting /hook, once with
the background embedding job off (ingest alone) and once with it on (it embeds every event on
a core of its own; on a 2-core machine it competes with the clients).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import queue
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ai_memory.core.observation import build_observation  # noqa: E402
from ai_memory.store.connection import open_write_connection  # noqa: E402
from ai_memory.store.migrations import migrate  # noqa: E402
from ai_memory.store.observations import insert_observation  # noqa: E402
from ai_memory.store.writer import Writer, WriteTx  # noqa: E402

CONCURRENCY = (1, 8, 32, 128)


def payload(i: int) -> dict[str, Any]:
    """A PostToolUse event of about 1 KB, like an agent editing and testing code."""
    return {
        "session_id": f"bench-{i % 50}", "hook_event_name": "PostToolUse", "cwd": "/home/dev/acme-api",
        "tool_name": "Bash", "tool_use_id": f"toolu_{i:08d}",
        "tool_input": {"command": f"pytest tests/test_auth.py -k login_{i} -q", "description": "run tests"},
        "tool_response": {"stdout": ("tests/test_auth.py::test_login PASSED\n" * 18)[:700] + f"{i} passed",
                          "stderr": "", "exit_code": 0},
    }


class SlowCommit:
    """A write connection whose COMMIT first sleeps: a slow fsync, for either writer."""

    def __init__(self, conn: sqlite3.Connection, delay_s: float) -> None:
        self._conn, self._delay_s = conn, delay_s

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql == "COMMIT":
            time.sleep(self._delay_s)
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class SlowWriter(Writer):
    """ai-memory's writer on a connection with a slow COMMIT."""

    def __init__(self, db: Path, raw_dir: Path, commit_delay_s: float) -> None:
        super().__init__(db, raw_dir)
        self._delay_s = commit_delay_s

    def _open(self) -> None:
        super()._open()  # migrations run on the plain connection
        if self._delay_s:
            self._conn = SlowCommit(self._conn, self._delay_s)  # type: ignore[arg-type, assignment]


class BaselineWriter:
    """One thread, one transaction per write: what the leading system does."""

    def __init__(self, db: Path, commit_delay_s: float) -> None:
        self._db, self._delay = db, commit_delay_s
        self._jobs: queue.Queue[Any] = queue.Queue(maxsize=1024)
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        plain = open_write_connection(self._db)
        migrate(plain)
        conn: Any = SlowCommit(plain, self._delay) if self._delay else plain
        while (item := self._jobs.get()) is not None:
            fn, loop, fut = item
            conn.execute("BEGIN IMMEDIATE")
            result = fn(WriteTx(conn))
            conn.execute("COMMIT")
            loop.call_soon_threadsafe(fut.set_result, result)
        conn.close()

    async def submit(self, fn: Callable[[WriteTx], Any]) -> Any:
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        await asyncio.to_thread(self._jobs.put, (fn, loop, fut))
        return await fut

    async def stop(self) -> None:
        await asyncio.to_thread(self._jobs.put, None)
        await asyncio.to_thread(self._thread.join)


async def drive(writer: Any, concurrency: int, total: int) -> dict[str, float]:
    """Store-direct: the same pre-sanitized observations go to either writer, so the figures
    measure the store alone (the HTTP suite measures the whole path, sanitizer included)."""
    latencies: list[float] = []
    observations = [build_observation(payload(i), agent="claude", event_hint=None,
                                      received_at=datetime.now(timezone.utc)) for i in range(total)]
    counter = iter(observations)

    async def client() -> None:
        for obs in counter:
            t0 = time.perf_counter()
            await writer.submit(insert_observation(obs))
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    elapsed = time.perf_counter() - t0
    return summarize(latencies, elapsed)


def summarize(latencies: list[float], elapsed: float) -> dict[str, float]:
    ordered = sorted(latencies)
    return {
        "writes_per_s": round(len(ordered) / elapsed, 1),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
        "n": len(ordered),
    }


async def store_direct(kind: str, concurrency: int, total: int, delay_s: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        if kind == "ours":
            writer: Any = SlowWriter(db, Path(tmp) / "raw", delay_s)
        else:
            writer = BaselineWriter(db, delay_s)
        await writer.start()
        try:
            return await drive(writer, concurrency, total)
        finally:
            await writer.stop()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def over_http(concurrency: int, total: int, url: str, token: str) -> dict[str, float]:
    """Keep-alive clients on raw asyncio streams: a lean client, so the figures are the daemon's
    (aiohttp's own client costs more CPU per request than the daemon does on a 2-core machine)."""
    host, port = url.removeprefix("http://").split(":")
    latencies: list[float] = []
    counter = iter(range(total))

    def request(i: int) -> bytes:
        body = json.dumps(payload(i)).encode()
        return (f"POST /hook?agent=claude HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body

    async def client() -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            for i in counter:
                data = request(i)
                t0 = time.perf_counter()
                writer.write(data)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                latencies.append(time.perf_counter() - t0)
                assert head.startswith(b"HTTP/1.1 202"), head[:40]
        finally:
            writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    elapsed = time.perf_counter() - t0
    return summarize(latencies, elapsed)


def http_suite(total: int, embeddings: bool) -> dict[str, dict[str, float]]:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        data, port = Path(tmp) / "data", free_port()
        env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "AI_MEMORY_EMBED_ENABLED": "1" if embeddings else "0"}
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)],
                                env=env, cwd=REPO, stderr=subprocess.DEVNULL)
        try:
            wait_healthy(port)
            token = (data / "token").read_text().strip()
            for c in CONCURRENCY:
                results[str(c)] = asyncio.run(over_http(c, total, f"http://127.0.0.1:{port}", token))
                label = "http+emb" if embeddings else "http"
                print(f"  {label:<8} {c:>3} clients: {fmt(results[str(c)])}", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return results


def wait_healthy(port: int) -> None:
    import http.client

    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("daemon did not start")


def fmt(m: dict[str, float]) -> str:
    return f"{m['writes_per_s']:>9.1f} writes/s  mean {m['mean_ms']:>7.2f} ms  p99 {m['p99_ms']:>7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write all figures to this file")
    parser.add_argument("--commit-delay-ms", type=float, default=0.0)
    parser.add_argument("--writes", type=int, default=4000, help="writes per measurement")
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--embeddings", choices=("off", "on", "both"), default="both",
                        help="run the HTTP suite with the background embedding job off, on, or both")
    args = parser.parse_args()
    delay = args.commit_delay_ms / 1000
    print(f"sqlite {sqlite3.sqlite_version}, commit delay {args.commit_delay_ms} ms, {args.writes} writes each")
    out: dict[str, Any] = {"commit_delay_ms": args.commit_delay_ms, "store_direct": {}, "http": {}}
    for c in CONCURRENCY:
        # The baseline at a 5+ ms commit delay manages ~150 writes/s: cap its sample size.
        n_base = args.writes if delay < 0.001 else min(args.writes, 600)
        ours = asyncio.run(store_direct("ours", c, args.writes, delay))
        base = asyncio.run(store_direct("baseline", c, n_base, delay))
        ratio = round(ours["writes_per_s"] / base["writes_per_s"], 2)
        out["store_direct"][str(c)] = {"ours": ours, "baseline": base, "ratio": ratio}
        print(f"  direct {c:>3} writers: ours {fmt(ours)} | baseline {fmt(base)} | ratio {ratio}x", flush=True)
    if not args.skip_http:
        if args.embeddings in ("off", "both"):
            out["http"] = http_suite(args.writes, embeddings=False)
        if args.embeddings in ("on", "both"):
            out["http_with_embeddings"] = http_suite(args.writes, embeddings=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
