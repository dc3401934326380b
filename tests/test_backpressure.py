"""A burst far above the writer's capacity gets 429s, never 5xx, and loses no acknowledged event."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import proc_memory as rss

from conftest import Daemon


def test_burst_gets_429_with_retry_after_and_keeps_every_202(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    # A tiny queue makes "20x the writer's capacity" reachable from one test process.
    (data_dir / "config.toml").write_text("[writer]\nqueue_size = 8\nmax_batch = 4\n")
    daemon = Daemon(data_dir).start()
    try:
        before = rss.of(daemon.proc.pid)

        def post(i: int) -> tuple[int, str | None, str | None]:
            status, body, headers = daemon.request(
                "POST", "/hook?agent=claude",
                {"session_id": "burst", "hook_event_name": "UserPromptSubmit", "prompt": "p" * 1000 + str(i)},
            )
            return status, (body or {}).get("id"), headers.get("Retry-After")

        with ThreadPoolExecutor(max_workers=64) as pool:
            results = list(pool.map(post, range(3000)))
        after = rss.of(daemon.proc.pid)
    finally:
        daemon.stop()
    statuses = [s for s, _, _ in results]
    assert not [s for s in statuses if s >= 500]
    assert statuses.count(429) > 0, "the queue bound should have been hit"
    assert all(ra is not None and int(ra) >= 1 for s, _, ra in results if s == 429)
    acked = {oid for s, oid, _ in results if s == 202}
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    stored = {row[0] for row in conn.execute("SELECT id FROM observations")}
    assert acked <= stored and len(stored) == len(acked)
    assert after - before < 200 * 1024 * 1024, f"daemon grew by {(after - before) >> 20} MiB"
