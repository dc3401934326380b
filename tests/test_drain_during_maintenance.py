"""Landed events are indexed within 2 s whatever maintenance runs: the spool drain never waits
for the maintenance lock a sync (up to ``sync.timeout_s``), a backup, a sweep or a reconcile
holds."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO, Daemon, cli_env
from wiki_helpers import wait_until

HOOK_CLIENT = REPO / "hooks" / "ai-memory-hook"
HANG_S = 20


class SilentRemote:
    """A git remote over HTTP that accepts the connection and never answers: a fetch hangs until
    the daemon gives up on it after ``sync.timeout_s``."""

    def __init__(self, port: int, held: list[socket.socket]) -> None:
        self.port, self.held = port, held


@pytest.fixture
def silent_remote() -> Iterator[SilentRemote]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield SilentRemote(server.getsockname()[1], held)
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def spool(daemon: Daemon, event: str, payload: dict) -> None:
    """The installed hook's way: the shell client spools the event and posts nothing."""
    done = subprocess.run([str(HOOK_CLIENT), "--data-dir", str(daemon.data_dir), "claude", event],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=10,
                          env=cli_env(daemon.data_dir, AI_MEMORY_PORT=str(daemon.port)))
    assert done.returncode == 0, done.stderr


def searchable(daemon: Daemon, word: str) -> bool:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": word, "project": "acme-api"})
    return status == 200 and any(word in json.dumps(hit) for hit in body["hits"] + body["raw_hits"])


def test_an_event_spooled_during_a_long_sync_is_searchable_within_2_s(tmp_path: Path,
                                                                     silent_remote: SilentRemote) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        f'[sync]\nremote = "http://127.0.0.1:{silent_remote.port}/wiki.git"\ntimeout_s = {HANG_S}\n'
        "interval_s = 3600\n"
        "[backup]\ninterval_hours = 0.0001\n"  # a backup due every 0.36 s: one always waits for the lock
        "[wiki]\nreconcile_interval_s = 1\n")  # and a reconcile
    daemon = Daemon(data).start()
    try:
        # the sync the daemon runs at start holds the maintenance lock while its fetch hangs
        wait_until(lambda: silent_remote.held, timeout=10)
        started = time.monotonic()
        spool(daemon, "UserPromptSubmit", {"session_id": "during-sync", "hook_event_name": "UserPromptSubmit",
                                           "cwd": "/home/dev/acme-api",
                                           "prompt": "Why does the invoice exporter drop zircon rows?"})
        took = wait_until(lambda: searchable(daemon, "zircon"), timeout=2.0)
        assert time.monotonic() - started < HANG_S - 5, "the sync could have let go of the lock meanwhile"
        status, brief, _ = daemon.request("POST", "/v1/briefing", {"session_id": "next", "cwd": "/home/dev/acme-api"})
        assert status == 200 and "zircon rows" in brief["text"]
        print(f"indexed {took:.2f} s after it landed, during the sync")
    finally:
        daemon.stop()
