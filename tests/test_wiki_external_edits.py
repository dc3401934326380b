"""Edits made outside ai-memory (vim, Obsidian, sed -i, delete + recreate, git checkout) are
searchable within 2 s and committed; broken pages are reported and never crash anything."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Daemon
from wiki_helpers import git, page_text, search_paths, wait_until

REL = "acme-api/notes/deploy.md"


@pytest.fixture
def wiki_daemon(daemon: Daemon) -> Daemon:
    path = daemon.data_dir / "wiki" / REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page_text("Deploy notes", "We deploy with blueharbor on Fridays."))
    wait_until(lambda: REL in search_paths(daemon, "blueharbor"), timeout=5)
    return daemon


def committed_clean(wiki: Path) -> bool:
    return git(wiki, "status", "--porcelain").strip() == ""


def assert_edit_lands(daemon: Daemon, word: str) -> None:
    took = wait_until(lambda: REL in search_paths(daemon, word), timeout=2.0)
    assert took <= 2.0
    wait_until(lambda: committed_clean(daemon.data_dir / "wiki"), timeout=5)
    assert "external edit" in git(daemon.data_dir / "wiki", "log", "-1", "--format=%s")


def test_vim_style_write_temp_and_rename(wiki_daemon: Daemon) -> None:
    path = wiki_daemon.data_dir / "wiki" / REL
    swap = path.parent / ".deploy.md.swp"
    swap.write_bytes(b"\x00vim swap")
    tmp = path.parent / "4913"
    tmp.write_text("")
    tmp.unlink()
    backup = path.parent / "deploy.md~"
    os.replace(path, backup)
    path.write_text(page_text("Deploy notes", "We deploy with greenlagoon now."))
    backup.unlink()
    swap.unlink()
    assert_edit_lands(wiki_daemon, "greenlagoon")


def test_vim_in_place_truncate_and_write(wiki_daemon: Daemon) -> None:
    path = wiki_daemon.data_dir / "wiki" / REL
    with open(path, "r+") as fh:
        fh.truncate(0)
        fh.write(page_text("Deploy notes", "Truncated in place: amberfalcon."))
    assert_edit_lands(wiki_daemon, "amberfalcon")


def test_obsidian_style_edit(wiki_daemon: Daemon) -> None:
    wiki = wiki_daemon.data_dir / "wiki"
    (wiki / ".obsidian").mkdir(exist_ok=True)
    (wiki / ".obsidian" / "workspace.json").write_text("{}")
    new = wiki / "acme-api" / "notes" / "Untitled.md"
    new.write_text("")
    os.replace(new, wiki / "acme-api" / "notes" / "Runbook.md")
    (wiki / "acme-api" / "notes" / "Runbook.md").write_text(page_text("Runbook", "Restart the violetcomet worker."))
    took = wait_until(lambda: "acme-api/notes/Runbook.md" in search_paths(wiki_daemon, "violetcomet"), timeout=2.0)
    assert took <= 2.0
    wait_until(lambda: committed_clean(wiki), timeout=5)
    assert ".obsidian" not in git(wiki, "log", "--name-only", "--format=")


def test_sed_in_place(wiki_daemon: Daemon) -> None:
    path = wiki_daemon.data_dir / "wiki" / REL
    subprocess.run(["sed", "-i", "s/blueharbor/silverkettle/", str(path)], check=True)
    assert_edit_lands(wiki_daemon, "silverkettle")
    assert REL not in search_paths(wiki_daemon, "blueharbor")


def test_delete_then_recreate(wiki_daemon: Daemon) -> None:
    path = wiki_daemon.data_dir / "wiki" / REL
    path.unlink()
    wait_until(lambda: REL not in search_paths(wiki_daemon, "blueharbor"), timeout=2.0)
    path.write_text(page_text("Deploy notes", "Recreated: copperridge."))
    assert_edit_lands(wiki_daemon, "copperridge")


def test_git_checkout_of_an_older_version(wiki_daemon: Daemon) -> None:
    wiki = wiki_daemon.data_dir / "wiki"
    wait_until(lambda: committed_clean(wiki), timeout=5)
    path = wiki / REL
    path.write_text(page_text("Deploy notes", "Second version: indigotrail."))
    assert_edit_lands(wiki_daemon, "indigotrail")
    first = git(wiki, "log", "--format=%H", "--", REL).split()[-1]
    git(wiki, "checkout", first, "--", REL)
    assert_edit_lands(wiki_daemon, "blueharbor")
    assert REL not in search_paths(wiki_daemon, "indigotrail")


@pytest.mark.parametrize("name, data, reason", [
    ("bad-yaml.md", b"---\ntitle: [unclosed\n---\nbody text quartzmoth\n", "bad frontmatter"),
    ("binary.md", b"\x00\x01\x02binary", "binary file"),
    ("latin1.md", "---\ntype: Note\n---\ncaf\xe9 quartzmoth".encode("latin-1"), "not UTF-8"),
    ("huge.md", b"---\ntype: Note\n---\n" + b"quartzmoth " * 120000, "too large"),
])
def test_broken_pages_are_reported_and_indexed_as_far_as_possible(daemon: Daemon, name: str, data: bytes,
                                                                  reason: str) -> None:
    path = daemon.data_dir / "wiki" / "acme-api" / "notes" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)

    def reported() -> bool:
        broken = daemon.request("GET", "/status")[1]["wiki"]["broken_pages"]
        return any(b["path"].endswith(name) and any(reason in p for p in b["problems"]) for b in broken)

    wait_until(reported, timeout=5)
    if reason != "binary file":
        assert f"acme-api/notes/{name}" in search_paths(daemon, "quartzmoth")
    assert daemon.request("GET", "/health", auth=False)[0] == 200


def test_generated_project_index_lists_pages_and_is_not_a_page(wiki_daemon: Daemon) -> None:
    index = wiki_daemon.data_dir / "wiki" / "acme-api" / "index.md"
    assert not index.exists()  # hand-written notes alone make no project folder
    status, body, _ = wiki_daemon.request("POST", "/v1/pages", {"text": "Deploys need a green build.",
                                                                "kind": "rule", "project": "acme-api"})
    assert status == 201, body
    wait_until(lambda: index.exists() and "[[notes/deploy|Deploy notes]]" in index.read_text(), timeout=5)
    assert "## Notes" in index.read_text()
    assert "acme-api/index.md" not in search_paths(wiki_daemon, "Generated by ai-memory")
    wait_until(lambda: committed_clean(wiki_daemon.data_dir / "wiki"), timeout=5)
    assert "acme-api/index.md" in git(wiki_daemon.data_dir / "wiki", "log", "--name-only", "--format=")


@pytest.fixture
def quiet_daemon(tmp_path: Path) -> Iterator[Daemon]:
    """No periodic reconcile during the test: every full comparison seen was set off by an event."""
    d = Daemon(tmp_path / "data", env={"AI_MEMORY_WIKI_RECONCILE_INTERVAL_S": "3600"}).start()
    yield d
    d.stop()


def reconciles(daemon: Daemon) -> int:
    return daemon.request("GET", "/status")[1]["wiki"]["reconciles"]


def test_a_commit_sets_off_no_full_comparison(quiet_daemon: Daemon) -> None:
    """Each commit makes folders under .git; they are not the vault's, and comparing every file
    for each of them kept an idle daemon at most of a core on a big wiki."""
    wiki = quiet_daemon.data_dir / "wiki"
    status, body, _ = quiet_daemon.request("POST", "/v1/pages", {"text": "Deploys need a green build.", "kind": "rule",
                                                                 "project": "acme-api"})
    assert status == 201, body
    wait_until(lambda: committed_clean(wiki), timeout=10)
    before = reconciles(quiet_daemon)
    (wiki / "journal").mkdir()
    (wiki / "journal" / "monday.md").write_text(page_text("Monday", "Paired on the tealotter migration."))
    wait_until(lambda: "journal/monday.md" in search_paths(quiet_daemon, "tealotter"), timeout=5)
    wait_until(lambda: committed_clean(wiki), timeout=10)  # and that commit's .git folders, too
    status, body, _ = quiet_daemon.request("POST", "/v1/pages", {"text": "Releases are tagged by CI.", "kind": "rule",
                                                                 "project": "acme-api"})
    assert status == 201, body
    wait_until(lambda: committed_clean(wiki), timeout=10)
    assert "acme-api" in str(search_paths(quiet_daemon, "tagged"))  # the watcher has caught up
    assert reconciles(quiet_daemon) - before == 1  # the new folder; no commit


def test_a_page_written_into_a_folder_is_synced_alone(quiet_daemon: Daemon) -> None:
    """Writing a page (ai-memory's or a person's) into an existing folder syncs that page, and
    compares no other file: each write once also reported its folder as modified, which the
    watcher took for a moved folder, so on a 100,000-page wiki every session's end compared
    every file again."""
    wiki = quiet_daemon.data_dir / "wiki"
    status, body, _ = quiet_daemon.request("POST", "/v1/pages", {"text": "Deploys need a green build.", "kind": "rule",
                                                                 "project": "acme-api"})
    assert status == 201, body
    folder = (wiki / body["path"]).parent
    wait_until(lambda: committed_clean(wiki), timeout=10)
    (folder / "first.md").write_text(page_text("First", "The pipeline runs on ambermoth."))
    wait_until(lambda: any(p.endswith("first.md") for p in search_paths(quiet_daemon, "ambermoth")), timeout=5)
    before = reconciles(quiet_daemon)
    for text in ("Releases are tagged by CI.", "Migrations run before the deploy.", "Feature flags live in etcd."):
        status, body, _ = quiet_daemon.request("POST", "/v1/pages", {"text": text, "kind": "rule", "project": "acme-api"})
        assert status == 201, body
    (folder / "later.md").write_text(page_text("Later", "Rollbacks go through saltfinch."))
    wait_until(lambda: any(p.endswith("later.md") for p in search_paths(quiet_daemon, "saltfinch")), timeout=5)
    assert reconciles(quiet_daemon) == before


def test_pages_moved_in_from_outside_and_a_renamed_folder_are_found(quiet_daemon: Daemon, tmp_path: Path) -> None:
    """Moves are what the watcher is told of (no periodic comparison here): a page moved into
    the wiki from elsewhere on the disk, and a folder of pages renamed inside it."""
    wiki = quiet_daemon.data_dir / "wiki"
    outside = tmp_path / "elsewhere"
    (outside / "drafts").mkdir(parents=True)
    (outside / "one.md").write_text(page_text("One", "Cache keys carry the tenant: copperheron."))
    (outside / "drafts" / "two.md").write_text(page_text("Two", "Retries back off to a minute: ivorylark."))
    (wiki / "acme-api" / "notes").mkdir(parents=True)
    os.rename(outside / "one.md", wiki / "acme-api" / "notes" / "one.md")
    os.rename(outside / "drafts", wiki / "acme-api" / "drafts")
    wait_until(lambda: "acme-api/notes/one.md" in search_paths(quiet_daemon, "copperheron"), timeout=5)
    wait_until(lambda: "acme-api/drafts/two.md" in search_paths(quiet_daemon, "ivorylark"), timeout=5)
    os.rename(wiki / "acme-api" / "drafts", wiki / "acme-api" / "design")
    wait_until(lambda: (paths := search_paths(quiet_daemon, "ivorylark")) and "acme-api/design/two.md" in paths
               and "acme-api/drafts/two.md" not in paths, timeout=5)


def test_a_touched_page_is_read_again_once(wiki_daemon: Daemon) -> None:
    """Same bytes, new mtime (touch, a copy, a checkout): the index takes the new stat, so the next
    comparisons find it equal instead of reading and parsing the file each time."""
    path = wiki_daemon.data_dir / "wiki" / REL
    later = path.stat().st_mtime_ns + 5_000_000_000
    os.utime(path, ns=(later, later))

    def stored_mtime() -> int:
        conn = sqlite3.connect(f"file:{wiki_daemon.data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT mtime_ns FROM pages WHERE path = ?", (REL,)).fetchone()[0]
        finally:
            conn.close()

    wait_until(lambda: stored_mtime() == later, timeout=5)
    assert REL in search_paths(wiki_daemon, "blueharbor")
