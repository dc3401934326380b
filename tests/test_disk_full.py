"""A full disk (ENOSPC) on a small tmpfs: failed writes answer 503 with a reason, nothing acknowledged
is lost, nothing is corrupted, and writes resume by themselves once space is freed.

Mounting needs root; elsewhere these tests skip and say so.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Daemon, run_cli
from wiki_helpers import git, wait_until

from ai_memory.core.errors import DiskFull
from ai_memory.store.raw_log import RawJournal
from ai_memory.store.writer import Writer

SESSION = "full-1"
# Git commits wait this long, so the test can fill the disk between a page write and its commit.
COMMIT_WINDOW_S = "3"


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 32 MiB tmpfs mounted for this test, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("the disk-full tests mount a small tmpfs, which needs root (run the suite as root)")
    mnt = tmp_path / "fs"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m,mode=0700", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], check=True)  # something still held it open


def fill(fs: Path, name: str = "filler") -> Path:
    """Write until ENOSPC: big chunks first, then pages, so not one page stays free."""
    path = fs / name
    with open(path, "wb", buffering=0) as fh:
        for chunk in (1 << 20, 4096, 512):
            try:
                while True:
                    fh.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    return path


def prompt(n: int) -> dict:
    return {"hook_event_name": "UserPromptSubmit", "session_id": SESSION, "cwd": "/home/dev/full",
            "prompt": f"event {n}: " + "retry the webhook with backoff " * 60}


def post(daemon: Daemon, n: int) -> tuple[int, dict]:
    status, body, _ = daemon.request("POST", "/hook?agent=claude", prompt(n), headers={"Idempotency-Key": f"k-{n}"})
    return status, body


def stored_ids(daemon: Daemon) -> set[str]:
    status, body, _ = daemon.request("GET", f"/v1/sessions/{SESSION}/observations")
    return {o["id"] for o in body["observations"]} if status == 200 else set()


def test_daemon_survives_a_full_disk_and_resumes_without_a_restart(small_fs: Path) -> None:
    data = small_fs  # the data dir is the tmpfs itself; the test's daemon log stays outside it
    daemon = Daemon(data, env={"AI_MEMORY_WIKI_COMMIT_WINDOW_S": COMMIT_WINDOW_S}).start()
    try:
        acked = {n: body["id"] for n in range(10) for status, body in [post(daemon, n)] if status == 202}
        assert len(acked) == 10
        session_page = compile_a_session_page(daemon)
        filler = fill(small_fs)

        failed = full_disk_phase(daemon, acked, session_page)
        filler.unlink()
        recovery_phase(daemon, acked, failed, session_page)
    finally:
        daemon.stop()
    consistent_at_rest(data, acked)


def compile_a_session_page(daemon: Daemon) -> str:
    """A session ends; its page file is written now and committed COMMIT_WINDOW_S later."""
    for event in ({"hook_event_name": "UserPromptSubmit", "prompt": "document the retry schedule " + os.urandom(3000).hex()},
                  {"hook_event_name": "Stop", "last_assistant_message": "Documented."}):
        status, body = daemon.post_hook({**event, "session_id": "ending", "cwd": "/home/dev/full"})
        assert status == 202, body
    done = run_cli(daemon.data_dir, "finalize-session", "--session", "ending", "--json", "--url", daemon.url)
    assert done.returncode == 0, done.stderr
    pages = list((daemon.data_dir / "wiki").rglob("sessions/*.md"))
    assert len(pages) == 1
    return pages[0].relative_to(daemon.data_dir / "wiki").as_posix()


def full_disk_phase(daemon: Daemon, acked: dict[int, str], session_page: str) -> dict[int, dict]:
    """Hooks get 202 (stored in what slack was left) or 503 with a JSON reason; never 500."""
    failed: dict[int, dict] = {}
    for n in range(10, 40):
        status, body = post(daemon, n)
        assert status in (202, 503), (status, body)
        if status == 202:
            acked[n] = body["id"]
        else:
            assert body["error"] == "disk is full; nothing was stored" and body["detail"], body
            failed[n] = body
    assert len(failed) >= 20, f"only {len(failed)} of 30 writes failed on a full disk"
    status, body, _ = daemon.request("POST", "/v1/pages", {"text": "Deploys run at noon.", "kind": "fact",
                                                           "project": "full"})
    assert status == 503 and "disk is full" in body["error"], body
    wait_until(lambda: daemon.request("GET", "/status")[1]["wiki"]["git"]["failures"] >= 1,  # the session page's commit
               timeout=float(COMMIT_WINDOW_S) + 30)
    assert session_page not in git(daemon.data_dir / "wiki", "log", "--name-only", "--format=")
    assert daemon.request("GET", "/health", auth=False)[0] == 200
    status, info, _ = daemon.request("GET", "/status")
    assert status == 200 and info["writer"]["failed_batches"] >= 1
    doctor = run_cli(daemon.data_dir, "doctor", "--json", "--url", daemon.url)
    disk = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "disk space")
    assert not disk["ok"] and "503" in disk["fix"]
    return failed


def recovery_phase(daemon: Daemon, acked: dict[int, str], failed: dict[int, dict], session_page: str) -> None:
    """Space is back: the same daemon stores again, and nothing that failed had been half-stored."""
    assert stored_ids(daemon) == set(acked.values())
    for n in sorted(failed):  # a client retrying from its spool, with the same idempotency key
        status, body = post(daemon, n)
        assert status == 202 and not body["duplicate"], (n, status, body)
        acked[n] = body["id"]
    for n in range(40, 50):
        status, body = post(daemon, n)
        assert status == 202, body
        acked[n] = body["id"]
    status, body = post(daemon, 3)  # acknowledged before the disk filled: still there, once
    assert status == 200 and body["duplicate"]
    status, body, _ = daemon.request("POST", "/v1/pages", {"text": "Deploys run at noon.", "kind": "fact",
                                                           "project": "full"})
    assert status == 201, body
    assert stored_ids(daemon) == set(acked.values())
    wiki = daemon.data_dir / "wiki"
    wait_until(lambda: session_page in git(wiki, "log", "--name-only", "--format="), timeout=30)


def consistent_at_rest(data: Path, acked: dict[int, str]) -> None:
    conn = sqlite3.connect(data / "db" / "memory.sqlite")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        in_db = {r[0] for r in conn.execute("SELECT id FROM observations WHERE session_id = ?", (SESSION,))}
    finally:
        conn.close()
    assert in_db == set(acked.values())
    for segment in (data / "raw").glob("*.jsonl"):  # no torn or glued line anywhere
        lines = segment.read_bytes().splitlines()
        assert all(isinstance(json.loads(line), dict) for line in lines), segment
    check = run_cli(data, "reindex", "--check", "--json")
    assert check.returncode == 0, check.stdout  # journal, files and index agree both ways
    fsck = subprocess.run(["git", "-C", str(data / "wiki"), "fsck", "--no-dangling"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_a_failed_commit_takes_its_batch_back_out_of_the_journal(small_fs: Path, tmp_path: Path) -> None:
    """The database is on the full disk, the journal is not: the append succeeds, COMMIT fails."""
    raw = tmp_path / "raw"

    def job(n: int):
        def insert(tx) -> None:
            # 200 kB fits SQLite's page cache, so the INSERT succeeds and only COMMIT (the WAL append)
            # meets the full disk: after the journal append. (1 MB would spill, and fail in the job.)
            tx.conn.execute("INSERT INTO idempotency_keys(key, observation_id, created_at) VALUES (?, ?, ?)",
                            (f"big-{n}-" + "x" * 200_000, f"obs-{n}", "2026-01-01"))
            tx.journal({"id": f"obs-{n}"})
        return insert

    async def main() -> None:
        writer = Writer(small_fs / "db" / "memory.sqlite", raw)
        await writer.start()
        try:
            await writer.submit(job(1))
            filler = fill(small_fs)
            with pytest.raises(DiskFull):
                await writer.submit(job(2))
            filler.unlink()
            await writer.submit(job(3))
        finally:
            await writer.stop()

    asyncio.run(main())
    lines = [json.loads(line) for line in b"".join(p.read_bytes() for p in raw.glob("*.jsonl")).splitlines()]
    assert [r["id"] for r in lines] == ["obs-1", "obs-3"]


def test_a_partial_journal_append_is_cut_back_and_a_torn_tail_fenced_off(small_fs: Path) -> None:
    journal = RawJournal(small_fs / "raw")
    journal.append([{"id": "first"}])
    segment = next((small_fs / "raw").glob("*.jsonl"))
    filler = fill(small_fs)
    os.truncate(filler, filler.stat().st_size - 3 * 4096)  # three pages free: less than the append needs
    with pytest.raises(OSError) as raised:
        journal.append([{"id": "big", "text": "y" * 200_000}])
    assert raised.value.errno == errno.ENOSPC
    assert segment.read_bytes() == b'{"id":"first"}\n'  # the part that fit was cut back off
    with segment.open("ab") as fh:  # a crash mid-append leaves a torn last line
        fh.write(b'{"id":"torn","te')
    journal.append([{"id": "after"}])
    journal.close()
    ids = [json.loads(line)["id"] for line in segment.read_bytes().splitlines() if line.endswith(b"}")]
    assert ids == ["first", "after"]


def test_an_error_that_only_says_full_fails_its_own_job_alone(tmp_path: Path) -> None:
    """A full disk is SQLITE_FULL, not a message with "full" in it: a job asking for a missing
    table named so fails alone, and the job beside it in the same batch commits."""
    def missing_table(tx) -> None:
        tx.conn.execute("SELECT * FROM disk_full_notes")  # "no such table: disk_full_notes"

    def insert(tx) -> str:
        tx.conn.execute("INSERT INTO idempotency_keys(key, observation_id, created_at) VALUES ('k', 'o', 'now')")
        return "stored"

    async def main() -> list[object]:
        writer = Writer(tmp_path / "memory.sqlite", tmp_path / "raw")
        await writer.start()
        try:
            return await asyncio.gather(writer.submit(missing_table), writer.submit(insert), return_exceptions=True)
        finally:
            await writer.stop()

    failed, stored = asyncio.run(main())
    assert isinstance(failed, sqlite3.OperationalError) and "disk_full_notes" in str(failed)
    assert stored == "stored"
