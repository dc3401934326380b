"""Backup while the daemon serves, restore elsewhere: nothing acknowledged is lost, the wiki's
history and the index come back; a bad archive or a served target changes nothing."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.backup import latest_backup
from ai_memory.backup.archive import verify_archive
from conftest import Daemon, run_cli
from wiki_helpers import wait_until

MEMORIES = (
    "Access tokens live 15 minutes in the auth service.",
    "Webhook senders retry 5 times with exponential backoff.",
    "The web app uses pnpm, never npm.",
)
QUERIES = ("how long do access tokens live", "webhook retries backoff", "pnpm or npm")


def _remember(daemon: Daemon) -> None:
    for text in MEMORIES:
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": text, "kind": "decision", "project": "acme"})
        assert status == 201, body


def _search(daemon: Daemon) -> list[list[str]]:
    answers = []
    for q in QUERIES:
        status, body, _ = daemon.request("POST", "/v1/query", {"q": q, "project": "acme"})
        assert status == 200, body
        answers.append([hit["path"] for hit in body["hits"]])
    return answers


def _git_log(wiki: Path, rev: str = "HEAD") -> str:
    return subprocess.run(["git", "-C", str(wiki), "log", "--format=%H %an %s", rev],
                          capture_output=True, text=True, check=True).stdout


def _committed(daemon: Daemon) -> bool:
    return not subprocess.run(["git", "-C", str(daemon.data_dir / "wiki"), "status", "--porcelain"],
                              capture_output=True, text=True, check=True).stdout


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _post_forever(daemon: Daemon, client: int, acked: list[tuple[str, str]], stop: threading.Event) -> None:
    i = 0
    while not stop.is_set():
        session = f"bk-{client}"
        status, body = daemon.post_hook({
            "session_id": session, "hook_event_name": "PostToolUse", "cwd": "/tmp", "tool_name": "Bash",
            "tool_input": {"command": f"make target-{client}-{i}"}, "tool_response": {"stdout": "ok " * 50}})
        if status == 202:
            acked.append((session, body["id"]))  # appended after the 202: acknowledged by now
        i += 1


def test_backup_under_load_restores_every_acknowledged_event(tmp_path: Path) -> None:
    source = Daemon(tmp_path / "a").start()
    restored = None
    try:
        _remember(source)
        wait_until(lambda: _committed(source))  # the memories' git commit window has passed
        answers = _search(source)
        assert all(answers), "each query should find its memory"
        acked: list[tuple[str, str]] = []
        stop = threading.Event()
        clients = [threading.Thread(target=_post_forever, args=(source, c, acked, stop)) for c in range(8)]
        for t in clients:
            t.start()
        wait_until(lambda: len(acked) > 50)
        before = list(acked)  # acknowledged before the backup began
        result = run_cli(source.data_dir, "backup", "--to", str(tmp_path / "b.tar.gz"), "--json")
        after = len(acked)
        wait_until(lambda: len(acked) > after)  # still flowing once the backup is done
        stop.set()
        for t in clients:
            t.join(timeout=30)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert len(before) > 50 and len(acked) > len(before), "hooks should be flowing before and during the backup"

        target = tmp_path / "restored"
        done = run_cli(tmp_path, "restore", report["path"], "--data-dir", str(target))
        assert done.returncode == 0, done.stderr
        assert _git_log(target / "wiki") == _git_log(source.data_dir / "wiki", report["wiki_head"])
        check = run_cli(target, "reindex", "--check")
        assert check.returncode == 0, check.stdout + check.stderr

        restored = Daemon(target).start()
        assert restored.port != source.port
        found: set[str] = set()
        for session in {s for s, _ in before}:
            status, body, _ = restored.request("GET", f"/v1/sessions/{session}/observations")
            assert status == 200, body
            found |= {o["id"] for o in body["observations"]}
        missing = [oid for _, oid in before if oid not in found]
        assert not missing, f"{len(missing)} of {len(before)} acknowledged events missing after restore"
        assert _search(restored) == answers
    finally:
        source.stop()
        if restored is not None:
            restored.stop()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path, Path]]:
    """A running daemon with a few memories, and two archives of it: plain and with the token."""
    base = tmp_path_factory.mktemp("served")
    daemon = Daemon(base / "data").start()
    _remember(daemon)
    plain, secret = base / "plain.tar.gz", base / "secret.tar.gz"
    assert run_cli(daemon.data_dir, "backup", "--to", str(plain)).returncode == 0
    assert run_cli(daemon.data_dir, "backup", "--to", str(secret), "--include-secrets").returncode == 0
    yield daemon, plain, secret
    daemon.stop()


def test_token_is_in_the_archive_only_with_include_secrets(served: tuple[Daemon, Path, Path]) -> None:
    daemon, plain, secret = served
    with tarfile.open(plain) as tar:
        assert "token" not in tar.getnames() and "config.toml" in tar.getnames()
    with tarfile.open(secret) as tar:
        assert tar.extractfile("token").read().decode().strip() == daemon.token
    assert not verify_archive(plain).includes_secrets and verify_archive(secret).includes_secrets


def test_restore_refuses_a_dir_a_daemon_serves(served: tuple[Daemon, Path, Path]) -> None:
    daemon, plain, _ = served
    before = _tree(daemon.data_dir / "wiki")
    done = run_cli(daemon.data_dir, "restore", str(plain), "--force")
    assert done.returncode == 1 and "daemon" in done.stderr and str(daemon.proc.pid) in done.stderr
    assert daemon.request("GET", "/health", auth=False)[0] == 200
    assert _tree(daemon.data_dir / "wiki") == before
    assert not list(daemon.data_dir.parent.glob("data.before-restore-*"))


def _tamper(src: Path, dst: Path) -> None:
    """The same archive with one member's bytes changed and the manifest left as it was."""
    with tarfile.open(src) as tin, tarfile.open(dst, "w:gz") as tout:
        for member in tin.getmembers():
            data = tin.extractfile(member).read()
            if member.name == "config.toml":
                data += b"\n# tampered\n"
                member.size = len(data)
            tout.addfile(member, io.BytesIO(data))


def test_a_corrupted_archive_is_refused_and_changes_nothing(served: tuple[Daemon, Path, Path], tmp_path: Path) -> None:
    _, plain, _ = served
    target = tmp_path / "data"
    assert run_cli(tmp_path, "restore", str(plain), "--data-dir", str(target)).returncode == 0
    before = _tree(target)
    tampered, truncated = tmp_path / "tampered.tar.gz", tmp_path / "truncated.tar.gz"
    _tamper(plain, tampered)
    truncated.write_bytes(plain.read_bytes()[: plain.stat().st_size // 2])
    for bad, why in ((tampered, "checksum mismatch"), (truncated, "cannot read the archive")):
        done = run_cli(tmp_path, "restore", str(bad), "--data-dir", str(target), "--force")
        assert done.returncode == 1 and why in done.stderr, done.stderr
        assert _tree(target) == before
        fresh = run_cli(tmp_path, "restore", str(bad), "--data-dir", str(tmp_path / "new"))
        assert fresh.returncode == 1 and not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "tampered.tar.gz", "truncated.tar.gz"]


def test_force_moves_the_old_dir_aside(served: tuple[Daemon, Path, Path], tmp_path: Path) -> None:
    _, plain, _ = served
    target = tmp_path / "data"
    assert run_cli(tmp_path, "restore", str(plain), "--data-dir", str(target)).returncode == 0
    token = (target / "token").read_text()
    (target / "wiki" / "notes.md").write_text("written after the restore\n")
    refused = run_cli(tmp_path, "restore", str(plain), "--data-dir", str(target))
    assert refused.returncode == 1 and "--force" in refused.stderr
    done = run_cli(tmp_path, "restore", str(plain), "--data-dir", str(target), "--force", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    aside = Path(report["moved_aside"])
    assert aside.name.startswith("data.before-restore-") and (aside / "wiki" / "notes.md").exists()
    assert not (target / "wiki" / "notes.md").exists()
    assert report["token"] == "kept" and (target / "token").read_text() == token
    assert run_cli(target, "reindex", "--check").returncode == 0


def test_scheduled_backups_keep_the_newest_n(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data", env={"AI_MEMORY_BACKUP_INTERVAL_HOURS": str(0.5 / 3600),
                                            "AI_MEMORY_BACKUP_KEEP": "2"}).start()
    seen: set[str] = set()

    def four_seen() -> bool:
        seen.update(p.name for p in (daemon.data_dir / "backups").glob("ai-memory-*.tar.gz"))
        return len(seen) >= 4

    try:
        wait_until(four_seen, timeout=30, step=0.1)
    finally:
        daemon.stop()
    kept = sorted(p.name for p in (daemon.data_dir / "backups").glob("ai-memory-*.tar.gz"))
    assert len(kept) == 2 and kept == sorted(seen | set(kept))[-2:]
    newest = latest_backup(daemon.data_dir)
    assert newest is not None and newest[0].name == kept[-1] and newest[1] < 30
    assert verify_archive(newest[0]).schema_version > 0
