"""``ai-memory doctor``'s data-dir checks: database integrity, git fsck, index drift, disk space, backups."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from conftest import Daemon, run_cli
from wiki_helpers import git, page_text

from ai_memory.wiki.fsck import fsck


def doctor(data_dir: Path, *args: str) -> tuple[int, dict[str, dict]]:
    done = run_cli(data_dir, "doctor", "--json", *args, HOME=str(data_dir.parent / "home"))
    report = json.loads(done.stdout)
    return done.returncode, {c["name"]: c for c in report["checks"]}


def test_a_healthy_data_dir_passes_and_a_missing_backup_only_warns(daemon: Daemon) -> None:
    (daemon.data_dir.parent / "home").mkdir()
    run_cli(daemon.data_dir, "install-hooks", "--agent", "claude", "--url", daemon.url,
            HOME=str(daemon.data_dir.parent / "home"))
    daemon.post_hook({"session_id": "doc-1", "hook_event_name": "Stop", "cwd": "/tmp"})
    code, checks = doctor(daemon.data_dir, "--url", daemon.url)
    assert code == 0, checks
    assert checks["database"]["ok"] and "integrity_check ok" in checks["database"]["detail"]
    assert checks["wiki git"]["ok"] and checks["wiki git"]["detail"].startswith("git fsck")
    assert checks["index drift"]["ok"] and checks["disk space"]["ok"]
    backup = checks["backup"]
    assert not backup["ok"] and backup["warning"] and backup["fix"] == "run: ai-memory backup"

    backups = daemon.data_dir / "backups"
    backups.mkdir(exist_ok=True)
    old = backups / "ai-memory-old.tar.gz"
    old.write_bytes(b"x")
    os.utime(old, (time.time() - 30 * 86400,) * 2)
    code, checks = doctor(daemon.data_dir, "--url", daemon.url)
    assert code == 0 and "older than" in checks["backup"]["detail"] and checks["backup"]["warning"]
    (backups / "ai-memory-new.tar.gz").write_bytes(b"x")
    _, checks = doctor(daemon.data_dir, "--url", daemon.url)
    assert checks["backup"]["ok"] and "ai-memory-new.tar.gz" in checks["backup"]["detail"]


def test_damage_is_found_and_each_problem_names_a_fix(daemon: Daemon) -> None:
    (daemon.data_dir.parent / "home").mkdir()
    status, _, _ = daemon.request("POST", "/v1/pages", {"text": "Deploys run at noon.", "kind": "fact",
                                                        "project": "doc"})
    assert status in (200, 201)
    daemon.stop()
    data = daemon.data_dir
    wiki = data / "wiki"
    # drift: a page the index has never seen
    (wiki / "doc" / "notes").mkdir(parents=True)
    (wiki / "doc" / "notes" / "new.md").write_text(page_text("New", "Written while the daemon was down.", "doc"))
    # git: a blob of the last commit goes missing
    blob = git(wiki, "rev-parse", "HEAD:README.md").strip()
    (wiki / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    # database: garbage over everything after the first pages
    db = data / "db" / "memory.sqlite"
    with db.open("r+b") as fh:
        fh.seek(8 * 4096)
        fh.write(os.urandom(db.stat().st_size - 8 * 4096))

    code, checks = doctor(data)
    assert code == 1
    assert not checks["database"]["ok"] and "reindex" in checks["database"]["fix"]
    assert not checks["wiki git"]["ok"] and blob in checks["wiki git"]["detail"]
    assert not checks["index drift"]["ok"] and checks["index drift"]["fix"].startswith("run: ai-memory reindex")
    text = run_cli(data, "doctor", HOME=str(data.parent / "home"))
    assert "!! database:" in text.stdout and "!! wiki git:" in text.stdout and "-- backup:" in text.stdout


def test_the_pygit2_walk_finds_a_missing_object_without_the_git_cli(daemon: Daemon) -> None:
    daemon.stop()
    wiki = daemon.data_dir / "wiki"
    clean = fsck(wiki, prefer_git=False)
    assert clean.ok and clean.method == "pygit2 walk" and clean.objects >= 3
    blob = git(wiki, "rev-parse", "HEAD:.gitignore").strip()
    (wiki / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    damaged = fsck(wiki, prefer_git=False)
    assert not damaged.ok and blob in damaged.problems[0]
    assert not fsck(wiki).ok  # and git fsck agrees
