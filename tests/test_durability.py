"""Acknowledged means durable: kill -9 mid-burst loses nothing that got a 202."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time

from conftest import Daemon


def _burst(daemon: Daemon, client: int, acked: list[str], stop: threading.Event) -> None:
    i = 0
    while not stop.is_set():
        key = f"c{client}-{i}"
        try:
            status, body = daemon.post_hook(
                {"session_id": f"kill-{client}", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                 "tool_input": {"command": f"echo {i}"}, "tool_response": {"stdout": "x" * 900}},
                **{"Idempotency-Key": key},
            )
        except OSError:
            return  # the daemon died under us: this request was never acknowledged
        if status == 202:
            acked.append(body["id"])
        i += 1


def test_kill_9_mid_burst_keeps_every_acknowledged_event_once(daemon: Daemon) -> None:
    acked: list[str] = []
    stop = threading.Event()
    threads = [threading.Thread(target=_burst, args=(daemon, c, acked, stop)) for c in range(8)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    daemon.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert len(acked) > 100, "the burst should have stored a good number of events"

    Daemon(daemon.data_dir).start().stop()  # recovery happens on open
    conn = sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stored = {}
    for (oid,) in conn.execute("SELECT id FROM observations"):
        stored[oid] = stored.get(oid, 0) + 1
    missing = [oid for oid in acked if oid not in stored]
    assert not missing, f"{len(missing)} acknowledged events lost"
    assert all(count == 1 for count in stored.values())
    fts = conn.execute("SELECT COUNT(*) FROM observations_fts").fetchone()[0]
    assert fts == len(stored)
