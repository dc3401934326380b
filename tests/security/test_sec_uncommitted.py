"""Item 9: page writes acknowledged but never committed. A lock a dead git left is removed, an
unreadable index rebuilt from HEAD; while git cannot commit, status and doctor say so, writes
past a bound get 503, and every acknowledged page reaches HEAD once git can take it (also
across a restart)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ai_memory.wiki.git import MAX_UNCOMMITTED_WRITES
from conftest import Daemon, run_cli
from wiki_helpers import wait_until

HOLD = ("import os, sys\nf = open(sys.argv[1], 'x')\nprint('held', flush=True)\nsys.stdin.read()\n"
        "f.close()\nos.unlink(sys.argv[1])\n")


def _in_head(data_dir: Path) -> set[str]:
    done = subprocess.run(["git", "-C", str(data_dir / "wiki"), "ls-tree", "-r", "--name-only", "HEAD"],
                          capture_output=True, text=True)
    return set(done.stdout.split())


def _write(daemon: Daemon, n: int) -> tuple[int, dict]:
    status, body, _ = daemon.request("POST", "/v1/pages", {"text": f"Fact number {n} about the billing cron.",
                                                            "kind": "fact", "project": "acme", "title": f"fact {n}"})
    return status, body


def _git_status(daemon: Daemon) -> dict:
    return daemon.request("GET", "/status")[1]["wiki"]["git"]


@contextmanager
def _held_lock(data_dir: Path) -> Iterator[None]:
    """A live process holding .git/index.lock open, as a long git command would."""
    lock = data_dir / "wiki" / ".git" / "index.lock"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


def test_a_stale_lock_is_removed_and_the_page_committed(daemon: Daemon) -> None:
    lock = daemon.data_dir / "wiki" / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 120
    os.utime(lock, (old, old))  # left by a git killed two minutes ago; nobody holds it
    status, body = _write(daemon, 1)
    assert status == 201, body
    wait_until(lambda: body["path"] in _in_head(daemon.data_dir), timeout=30)
    assert not lock.exists()
    assert any("stale index.lock" in line for line in _git_status(daemon)["repairs"])


def test_an_unreadable_index_is_rebuilt_from_head(daemon: Daemon) -> None:
    git_dir = daemon.data_dir / "wiki" / ".git"
    (git_dir / "index").write_bytes(b"\x00garbage index\xff" * 64)
    status, body = _write(daemon, 2)
    assert status == 201, body
    wait_until(lambda: body["path"] in _in_head(daemon.data_dir), timeout=30)
    assert list(git_dir.glob("index.unreadable-*"))
    assert subprocess.run(["git", "-C", str(daemon.data_dir / "wiki"), "status", "--porcelain"],
                          capture_output=True, text=True, check=True).stdout.strip() == ""


def test_while_git_is_held_writes_are_visible_bounded_and_committed_later(daemon: Daemon) -> None:
    paths = []
    with _held_lock(daemon.data_dir):
        for n in range(MAX_UNCOMMITTED_WRITES):
            status, body = _write(daemon, 100 + n)
            assert status == 201, body
            paths.append(body["path"])
        git = _git_status(daemon)
        assert git["failing"] and git["uncommitted_writes"] == MAX_UNCOMMITTED_WRITES and "locked" in git["last_error"]
        status, body = _write(daemon, 999)
        assert status == 503 and "commits keep failing" in body["error"], body
        doctor = json.loads(run_cli(daemon.data_dir, "doctor", "--json", "--url", daemon.url).stdout)
        check = next(c for c in doctor["checks"] if c["name"] == "wiki commits")
        assert not check["ok"] and "not in git yet" in check["detail"]
        assert not set(paths) & _in_head(daemon.data_dir)
    wait_until(lambda: set(paths) <= _in_head(daemon.data_dir), timeout=60)
    assert not _git_status(daemon)["failing"]
    assert _write(daemon, 1000)[0] == 201


def test_pages_left_uncommitted_by_a_stopped_daemon_are_committed_at_the_next_start(data_dir: Path) -> None:
    daemon = Daemon(data_dir).start()
    try:
        with _held_lock(data_dir):
            status, body = _write(daemon, 7)
            assert status == 201, body
            daemon.stop()  # its last commit fails: git is still held
        assert body["path"] not in _in_head(data_dir)
        doctor = json.loads(run_cli(data_dir, "doctor", "--json").stdout)
        assert next(c for c in doctor["checks"] if c["name"] == "wiki commits")["ok"]
        daemon = Daemon(data_dir).start()
        wait_until(lambda: body["path"] in _in_head(data_dir), timeout=30)
    finally:
        if daemon.proc and daemon.proc.poll() is None:
            daemon.stop()


def test_doctor_names_a_lock_left_behind(data_dir: Path) -> None:
    Daemon(data_dir).start().stop()  # lays out the data dir and its repository
    lock = data_dir / "wiki" / ".git" / "index.lock"
    lock.write_text("")
    doctor = json.loads(run_cli(data_dir, "doctor", "--json").stdout)
    check = next(c for c in doctor["checks"] if c["name"] == "wiki commits")
    assert not check["ok"] and "index.lock" in check["detail"] and f"rm {lock}" in check["fix"]
