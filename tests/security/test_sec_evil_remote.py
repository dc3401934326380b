"""Items 1 and 3: a sync remote is hostile. Its tree may name ``../../x``, ``.git/hooks/…``, a
symlink or a submodule; its URL may be an option or a command-running transport. Nothing of it
is written, nothing runs, and the wiki stays as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from ai_memory.core.errors import SyncError
from ai_memory.wiki.gitsync import commit_and_merge
from ai_memory.wiki.repo import ensure_repo
from conftest import Daemon, run_cli
from evil_git import BLOB, EXEC, GITLINK, LINK, TREE, bare, blob, commit, publish, tree


def _head(data_dir: Path) -> str:
    return str(pygit2.Repository(str(data_dir / "wiki")).head.target)


def _sync(daemon: Daemon, remote: str) -> tuple[int, dict]:
    status, body, _ = daemon.request("POST", "/v1/sync", {"remote": remote}, timeout=120)
    return status, body


def _hook_tree(repo: Path, marker: Path) -> str:
    hook = blob(repo, f"#!/bin/sh\ntouch {marker}\n".encode())
    return tree(repo, [(TREE, "hooks", tree(repo, [(EXEC, "pre-push", hook), (EXEC, "post-merge", hook)]))])


def test_a_dotdot_entry_writes_nothing_outside_or_inside(daemon: Daemon, tmp_path: Path) -> None:
    remote = bare(tmp_path / "evil.git")
    publish(remote, [(BLOB, "../../outside.txt", blob(remote, b"[core]\n\tplanted = yes\n")),
                     (BLOB, "notes/ok.md", blob(remote, b"---\ntype: Note\n---\nfine\n"))])
    before = _head(daemon.data_dir)
    status, body = _sync(daemon, str(remote))
    assert status == 502, body
    assert not (tmp_path / "outside.txt").exists()
    assert not (daemon.data_dir / "wiki" / "notes" / "ok.md").exists()  # the whole merge is refused
    assert _head(daemon.data_dir) == before


def test_hooks_from_a_remote_never_land_nor_run(daemon: Daemon, tmp_path: Path) -> None:
    remote = bare(tmp_path / "evil.git")
    marker = tmp_path / "pwned"
    publish(remote, [(TREE, ".git", _hook_tree(remote, marker)),
                     (TREE, ".GIT", _hook_tree(remote, marker))])
    status, body = _sync(daemon, str(remote))
    assert status == 502, body
    hooks = daemon.data_dir / "wiki" / ".git" / "hooks"
    assert not (hooks / "pre-push").exists() and not (hooks / "post-merge").exists()
    # a later, honest sync pushes: a planted pre-push hook would run now
    honest = bare(tmp_path / "honest.git")
    status, body = _sync(daemon, str(honest))
    assert status == 200 and body["pushed"], body
    assert not marker.exists()


@pytest.mark.parametrize("mode, name, what", [(LINK, "passwd.md", "symlink"), (GITLINK, "vendor", "submodule")])
def test_symlink_and_submodule_entries_are_refused(daemon: Daemon, tmp_path: Path, mode: str, name: str,
                                                   what: str) -> None:
    remote = bare(tmp_path / "evil.git")
    target = blob(remote, b"/etc/passwd") if mode == LINK else "1" * 40
    publish(remote, [(TREE, "notes", tree(remote, [(mode, name, target)]))])
    status, body = _sync(daemon, str(remote))
    assert status == 502 and what in body["error"], body
    assert not (daemon.data_dir / "wiki" / "notes" / name).exists()
    assert not (daemon.data_dir / "wiki" / "notes").is_symlink()


def test_the_merge_itself_refuses_what_fsck_would(tmp_path: Path) -> None:
    """Even with no fsck in front of it (objects already in the repository), the merge refuses."""
    wiki = tmp_path / "wiki"
    ensure_repo(wiki)
    git_dir = wiki / ".git"
    for entries in ([(BLOB, "../../outside.txt", blob(git_dir, b"planted"))],
                    [(TREE, ".git", tree(git_dir, [(TREE, "hooks", tree(git_dir, [(EXEC, "pre-push",
                                                                                        blob(git_dir, b"x"))]))]))],
                    [(BLOB, "a/../../../outside.txt", blob(git_dir, b"planted"))]):
        evil = commit(git_dir, tree(git_dir, entries))
        with pytest.raises(SyncError):
            commit_and_merge(wiki, evil)
        assert not (tmp_path / "outside.txt").exists() and not (tmp_path.parent / "outside.txt").exists()
        assert not (git_dir / "hooks" / "pre-push").exists()


@pytest.mark.parametrize("remote", [
    "--upload-pack=touch {marker}; echo", "-oProxyCommand=touch {marker}", "ext::sh -c touch% {marker}",
    "fd::3", "foo::bar", "unknown-scheme://host/x", "{tmp}/missing.git", "ok\n--upload-pack=touch {marker}",
])
def test_a_remote_that_is_an_option_or_a_transport_is_refused(daemon: Daemon, tmp_path: Path, remote: str) -> None:
    marker = tmp_path / "pwned"
    status, body = _sync(daemon, remote.format(marker=marker, tmp=tmp_path))
    assert status == 400 and body["error"] in ("bad git remote", "no git remote to sync with"), body
    assert not marker.exists()


def test_the_cli_and_the_config_refuse_it_too(data_dir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    done = run_cli(data_dir, "sync", f"--remote=--upload-pack=touch {marker}; echo")
    assert done.returncode != 0 and "bad git remote" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    (data_dir / "config.toml").write_text(f'[sync]\nremote = "--upload-pack=touch {marker}; echo"\n')
    done = run_cli(data_dir, "sync")
    assert done.returncode != 0 and "bad git remote" in done.stderr
    assert not marker.exists()
    assert subprocess.run(["git", "-C", str(data_dir / "wiki"), "status"], capture_output=True).returncode == 0


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def test_a_remote_cannot_redirect_a_live_project_by_an_alias(daemon: Daemon, tmp_path: Path) -> None:
    """Issue 39, item 8: a remote's projects file naming ``victim`` an old name of ``evil``
    is held back while ``victim`` holds pages here: events and memories for victim stay in
    victim; status names the alias and the verb that accepts it."""
    import json

    status, page, _ = daemon.request("POST", "/v1/pages", {"text": "Victim deploys on Mondays.", "kind": "fact",
                                                           "project": "victim"})
    assert status == 201, page
    remote = tmp_path / "shared.git"
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(remote)], check=True)
    assert _sync(daemon, str(remote))[0] == 200
    attacker = tmp_path / "attacker"
    subprocess.run(["git", "clone", "--quiet", str(remote), str(attacker)], check=True)
    (attacker / ".ai-memory").mkdir(exist_ok=True)
    (attacker / ".ai-memory" / "projects.json").write_text(json.dumps({"aliases": {"victim": "evil"}, "sessions": {}}))
    _git(attacker, "add", "-A")
    _git(attacker, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "--quiet", "-m", "alias")
    _git(attacker, "push", "--quiet", "origin", "HEAD:main")
    status, body = _sync(daemon, str(remote))
    assert status == 200, body
    assert (daemon.data_dir / "wiki" / ".ai-memory" / "projects.json").exists()  # the file came, as is
    status, report, _ = daemon.request("GET", "/status")
    assert any("victim" in p and "not applied" in p for p in report["wiki"]["projects_file"]), report["wiki"]
    hooked = daemon.post_hook({"session_id": "victim-1", "hook_event_name": "UserPromptSubmit",
                               "cwd": "/home/dev/victim", "prompt": "Ship the victim release"})
    assert hooked[0] == 202
    status, stored, _ = daemon.request("POST", "/v1/pages", {"text": "Victim rotates keys monthly.", "kind": "fact",
                                                             "project": "victim"})
    assert status == 201 and stored["path"].startswith("victim/"), stored
    with __import__("sqlite3").connect(daemon.data_dir / "db" / "memory.sqlite") as conn:
        assert conn.execute("SELECT project FROM observations WHERE session_id = 'victim-1'").fetchone() == ("victim",)
    assert not (daemon.data_dir / "wiki" / "evil").exists()
