"""Items 2 and 16: a backup archive is hostile. Members under ``wiki/.git`` (hooks, config) are
refused, no member keeps an executable bit, the bundle is fsck-checked, and restore's git runs no
hook at all (not even one a git template dir would plant). The archive being written is 0600
from its first byte."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Daemon, run_cli
from evil_git import BLOB, bare, blob, publish

Members = dict[str, tuple[bytes, int]]  # name -> (data, mode)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("archive")
    daemon = Daemon(root / "data").start()
    try:
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": "Deploys go out on Tuesdays.",
                                                                "kind": "decision", "project": "acme"})
        assert status == 201, body
        done = run_cli(daemon.data_dir, "backup", "--to", str(root / "plain.tar.gz"), "--json")
        assert done.returncode == 0, done.stderr
    finally:
        daemon.stop()
    return root / "plain.tar.gz"


def _read(path: Path) -> Members:
    with tarfile.open(path, "r:gz") as tar:
        return {m.name: (tar.extractfile(m).read(), m.mode) for m in tar if m.isreg()}  # type: ignore[union-attr]


def _write(members: Members, path: Path) -> Path:
    """An archive with a manifest that vouches for every member, as an attacker would make it."""
    manifest = json.loads(members["manifest.json"][0])
    manifest["files"] = {name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                         for name, (data, _) in members.items() if name != "manifest.json"}
    with tarfile.open(path, "w:gz") as tar:
        for name, (data, mode) in [("manifest.json", (json.dumps(manifest).encode(), 0o644)),
                                   *((n, m) for n, m in members.items() if n != "manifest.json")]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return path


def _crafted(archive: Path, tmp_path: Path, change: Callable[[Members], None]) -> Path:
    members = _read(archive)
    change(members)
    return _write(members, tmp_path / "crafted.tar.gz")


def _hook(marker: Path) -> bytes:
    return f"#!/bin/sh\ntouch {marker}\n".encode()


@pytest.mark.parametrize("name", ["wiki/.git/hooks/post-checkout", "wiki/.git/config", "wiki/notes/.git/hooks/x",
                                  "wiki/.GIT/hooks/reference-transaction", "wiki/git~1/config"])
def test_git_members_are_refused_and_nothing_is_restored(archive: Path, tmp_path: Path, name: str) -> None:
    marker = tmp_path / "pwned"
    crafted = _crafted(archive, tmp_path, lambda m: m.__setitem__(name, (_hook(marker), 0o755)))
    target = tmp_path / "restored"
    done = run_cli(tmp_path, "restore", str(crafted), "--data-dir", str(target))
    assert done.returncode == 1 and "never writes" in done.stderr, done.stderr
    assert not target.exists() and not marker.exists()
    assert not list(tmp_path.glob(".restored.restoring-*"))


def test_no_member_keeps_an_executable_bit(archive: Path, tmp_path: Path) -> None:
    def executable(members: Members) -> None:
        for name, (data, _) in list(members.items()):
            members[name] = (data, 0o4777)
        members["wiki/acme/run.sh"] = (b"#!/bin/sh\necho hi\n", 0o755)

    target = tmp_path / "restored"
    done = run_cli(tmp_path, "restore", str(_crafted(archive, tmp_path, executable)), "--data-dir", str(target))
    assert done.returncode == 0, done.stderr
    for path in (p for p in target.rglob("*") if p.is_file() and ".git" not in p.parts):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert not mode & 0o7111 and not mode & 0o022, (path, oct(mode))


def test_restore_runs_no_git_hook_not_even_a_templates(archive: Path, tmp_path: Path) -> None:
    """A git template dir in the user's config would put hooks into the new repository; fetch and
    update-ref then run reference-transaction. Restore runs with hooks off and no template."""
    marker = tmp_path / "pwned"
    hooks = tmp_path / "template" / "hooks"
    hooks.mkdir(parents=True)
    for hook in ("reference-transaction", "post-checkout", "post-index-change"):
        (hooks / hook).write_bytes(_hook(marker))
        (hooks / hook).chmod(0o755)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f"[init]\n\ttemplateDir = {tmp_path / 'template'}\n")
    target = tmp_path / "restored"
    done = run_cli(tmp_path, "restore", str(archive), "--data-dir", str(target), GIT_CONFIG_GLOBAL=str(gitconfig))
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert not (target / "wiki" / ".git" / "hooks").exists()  # no template was copied


def test_a_bundle_with_a_dotdot_tree_is_refused(archive: Path, tmp_path: Path) -> None:
    evil = bare(tmp_path / "evil.git")
    head = publish(evil, [(BLOB, "../../outside.txt", blob(evil, b"planted"))])
    bundle = tmp_path / "evil.bundle"
    subprocess.run(["git", f"--git-dir={evil}", "bundle", "create", "--quiet", str(bundle), "--all"], check=True)

    def swap(members: Members) -> None:
        members["wiki.bundle"] = (bundle.read_bytes(), 0o644)
        manifest = json.loads(members["manifest.json"][0])
        manifest["wiki_head"], manifest["wiki_head_ref"] = head, "refs/heads/main"
        members["manifest.json"] = (json.dumps(manifest).encode(), 0o644)

    target = tmp_path / "restored"
    done = run_cli(tmp_path, "restore", str(_crafted(archive, tmp_path, swap)), "--data-dir", str(target))
    # git's own checks refuse it (fsck of the fetch, or read-tree's path check): nothing is restored
    assert done.returncode == 1 and ("git fetch failed" in done.stderr or "git read-tree failed" in done.stderr)
    assert not target.exists() and not (tmp_path / "outside.txt").exists()


@pytest.mark.parametrize("head, ref", [("HEAD", "refs/heads/main"), (None, ""), ("-q", ""),
                                       ("<commit>", "--short"), ("<commit>", "refs/heads/../../config"),
                                       ("<commit>", "refs/tags/v1"), ("<commit>", ["refs/heads/main"])])
def test_a_manifest_naming_no_commit_or_a_bad_branch_is_refused(archive: Path, tmp_path: Path,
                                                                head: object, ref: object) -> None:
    """The manifest's head is handed to git: only a commit id and a branch under refs/heads/."""
    def change(members: Members) -> None:
        manifest = json.loads(members["manifest.json"][0])
        manifest["wiki_head"] = manifest["wiki_head"] if head == "<commit>" else head
        manifest["wiki_head_ref"] = ref
        members["manifest.json"] = (json.dumps(manifest).encode(), 0o644)

    target = tmp_path / "restored"
    done = run_cli(tmp_path, "restore", str(_crafted(archive, tmp_path, change)), "--data-dir", str(target))
    assert done.returncode == 1 and "manifest names" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not target.exists()


def test_the_partial_archive_is_0600_from_its_first_byte(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    try:
        big = daemon.data_dir / "wiki" / "attachments" / "scan.bin"
        big.parent.mkdir()
        big.write_bytes(os.urandom(40 * 1024 * 1024))  # incompressible: the archive takes a while
        target = tmp_path / "out.tar.gz"
        partial = target.with_name(target.name + ".partial")
        modes: set[int] = set()
        done_event = threading.Event()

        def watch() -> None:
            while not done_event.is_set():
                try:
                    modes.add(stat.S_IMODE(os.stat(partial).st_mode))
                except FileNotFoundError:
                    pass

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            done = run_cli(daemon.data_dir, "backup", "--to", str(target), timeout=300)
        finally:
            done_event.set()
            watcher.join()
        assert done.returncode == 0, done.stderr
        assert modes, "the partial file was never seen"
        assert modes == {0o600}, [oct(m) for m in modes]
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
    finally:
        daemon.stop()


# ---- issue 39, item 1: an archive's config.toml and token are someone else's ---------------------

HOSTILE_TOKEN = "attacker-token-0123456789abcdefghijklmnopqrstuv"


def _hostile(archive: Path, tmp_path: Path, listener: int, remote: Path) -> Path:
    config = (f'[llm]\nprovider = "openai"\nmodel = "gpt"\nbase_url = "http://127.0.0.1:{listener}/v1"\n'
              f'api_key_env = "GITHUB_TOKEN"\n[sync]\nremote = "{remote}"\ninterval_s = 1\n').encode()

    def change(members: Members) -> None:
        members["config.toml"] = (config, 0o600)
        members["token"] = (HOSTILE_TOKEN.encode() + b"\n", 0o600)

    return _crafted(archive, tmp_path, change)


class Listener:
    """A TCP port that counts who connects to it (where the archive sends the provider's key)."""

    def __init__(self) -> None:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return count
            conn.close()
            count += 1


def test_a_restore_keeps_this_machines_config_and_token(archive: Path, tmp_path: Path) -> None:
    listener = Listener()
    remote = tmp_path / "attacker.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    target = tmp_path / "data"
    assert run_cli(tmp_path, "restore", str(archive), "--data-dir", str(target)).returncode == 0
    mine_config, mine_token = (target / "config.toml").read_bytes(), (target / "token").read_text()
    crafted = _hostile(archive, tmp_path, listener.port, remote)
    done = run_cli(tmp_path, "restore", str(crafted), "--data-dir", str(target), "--force", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["config"], report["token"]) == ("kept", "kept")
    assert (target / "config.toml").read_bytes() == mine_config and (target / "token").read_text() == mine_token
    assert b"base_url" in (target / "config.toml.from-backup").read_bytes()  # kept aside, read by nothing
    daemon = Daemon(target, env={"GITHUB_TOKEN": "ghp_the_users_own_token"}).start()
    try:
        status, body, _ = daemon.request("GET", "/status")
        assert status == 200 and not body["llm"].get("enabled"), body["llm"]
        status, _, _ = daemon.request("GET", "/status", headers={"Authorization": f"Bearer {HOSTILE_TOKEN}"})
        assert status == 401
    finally:
        daemon.stop()
    assert listener.connections() == 0
    assert not subprocess.run(["git", f"--git-dir={remote}", "rev-parse", "--verify", "--quiet", "HEAD"],
                              capture_output=True).stdout


def test_with_config_the_keys_that_reach_the_network_must_be_confirmed(archive: Path, tmp_path: Path) -> None:
    crafted = _hostile(archive, tmp_path, Listener().port, tmp_path / "attacker.git")
    target = tmp_path / "data"
    done = run_cli(tmp_path, "restore", str(crafted), "--data-dir", str(target), "--with-config")
    assert done.returncode == 1, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1
    assert "llm.base_url" in done.stderr and "sync.remote" in done.stderr and "--with-config" in done.stderr
    assert not target.exists()
    answered = _on_a_terminal(["restore", str(crafted), "--data-dir", str(target), "--with-config", "--with-token"],
                              tmp_path, "y\n")
    assert answered.returncode == 0, answered.stdout
    assert "llm.base_url = 'http://127.0.0.1:" in answered.stdout and "Use this config?" in answered.stdout
    assert b"base_url" in (target / "config.toml").read_bytes() and (target / "token").read_text().strip() == HOSTILE_TOKEN


def _on_a_terminal(args: list[str], tmp_path: Path, answer: str) -> subprocess.CompletedProcess[str]:
    """The CLI with a terminal on stdin, stdout and stderr, a person typing ``answer``."""
    import pty
    import sys

    from conftest import REPO, cli_env

    controller, terminal = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", *args], stdin=terminal, stdout=terminal,
                            stderr=terminal, env=cli_env(tmp_path / "unused"), cwd=REPO)
    os.close(terminal)
    seen, sent = b"", False
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if not sent and b"[y/N]" in seen:
            os.write(controller, answer.encode())
            sent = True
    os.close(controller)
    return subprocess.CompletedProcess(args, proc.wait(timeout=60), seen.decode(errors="replace"), "")
