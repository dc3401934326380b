"""``ai-memory project rename``: the folder moves in one commit, every row follows, the old name
keeps resolving (search, hooks, handoffs, messages), and ``reindex --check`` stays clean."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Daemon, run_cli
from lifecycle_helpers import cli, hits, ok_json, rows
from wiki_helpers import git, wait_until

SESSION = "7a1b2c3d-0000-4000-8000-00000000aa01"
HAND_WRITTEN = "# Release checklist\n\nTag, build, then announce in #releases.\n"


def fails(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert done.returncode == code, (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and all(w in done.stderr for w in words), done.stderr


def hook(daemon: Daemon, event: str, session: str, cwd: str, **extra: Any) -> None:
    status, body = daemon.post_hook({"session_id": session, "hook_event_name": event, "cwd": cwd, **extra})
    assert status == 202, body


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """A daemon whose project ``acme`` has a memory, a person's note, a compiled session with its
    handoff and a message waiting; ``beta`` is another project."""
    daemon = Daemon(tmp_path_factory.mktemp("rename") / "data").start()
    for project, text in (("acme", "Acme deploys the billing service on Tuesdays."),
                          ("beta", "Beta keeps its logs for 30 days.")):
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": text, "kind": "fact", "project": project})
        assert status == 201, body
    note = daemon.data_dir / "wiki" / "acme" / "notes" / "release-checklist.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(HAND_WRITTEN)
    hook(daemon, "UserPromptSubmit", SESSION, "/home/dev/acme", prompt="Fix the flaky invoice export test")
    hook(daemon, "SessionEnd", SESSION, "/home/dev/acme")
    wait_until(lambda: rows(daemon, "SELECT page_path FROM sessions WHERE id = ? AND page_path IS NOT NULL", SESSION))
    wait_until(lambda: rows(daemon, "SELECT 1 FROM pages WHERE path = 'acme/notes/release-checklist.md'"))
    status, body, _ = daemon.request("POST", "/v1/messages", {"to_project": "acme", "body": "schema v2 is live"})
    assert status == 201, body
    wiki = daemon.data_dir / "wiki"  # everything committed: a test that reads HEAD reads a still one
    index = wiki / "acme" / "index.md"  # the note's reconcile rewrites it: it is the last to change
    wait_until(lambda: index.exists() and "Release checklist" in index.read_text(), timeout=20)
    wait_until(lambda: git(wiki, "status", "--porcelain").strip() == "", timeout=20)
    yield daemon
    daemon.stop()


def test_dry_run_shows_the_moves_and_changes_nothing(acme: Daemon) -> None:
    head = git(acme.data_dir / "wiki", "rev-parse", "HEAD")
    plan = ok_json(acme, "project", "rename", "acme", "Acme API", "--dry-run")
    assert plan["dry_run"] and plan["from"] == "acme" and plan["to"] == "acme-api"  # the name normalised
    moved = {m["from"]: m["to"] for m in plan["moved"]}
    assert moved["acme/notes/release-checklist.md"] == "acme-api/notes/release-checklist.md"
    assert (acme.data_dir / "wiki" / "acme").is_dir() and not (acme.data_dir / "wiki" / "acme-api").exists()
    assert git(acme.data_dir / "wiki", "rev-parse", "HEAD") == head, git(acme.data_dir / "wiki", "log", "-3", "--stat")


def test_refusals_are_one_line_each(acme: Daemon) -> None:
    fails(cli(acme, "project", "rename", "acme", "beta"), 1, "beta exists", "merge")
    fails(cli(acme, "project", "rename", "acme", "acme"), 1, "the same")
    fails(cli(acme, "project", "rename", "nope", "other"), 1, "no project nope")
    fails(cli(acme, "project", "rename", "acme", "///"), 1, "bad new project name")
    fails(cli(acme, "project", "rename", "_global", "x"), 1, "_global")
    for unread in ("node_modules", "NUL", "con.d", "com1"):  # the wiki skips the folder; Windows refuses it
        fails(cli(acme, "project", "rename", "acme", unread), 1, "bad new project name")
        fails(cli(acme, "project", "merge", "acme", unread), 1, "bad destination project name")
    status, body, _ = acme.request("POST", "/v1/projects/rename", {"from": "nope", "to": "x"})
    assert status == 404 and body["error"] == "no project nope"


def test_rename_moves_the_folder_in_one_commit_and_everything_follows(acme: Daemon) -> None:
    wiki = acme.data_dir / "wiki"
    before = sorted(p.relative_to(wiki / "acme").as_posix() for p in (wiki / "acme").rglob("*") if p.is_file())
    report = ok_json(acme, "project", "rename", "acme", "acme-api")
    assert not report["dry_run"] and report["git_commit"]

    # one commit holds the whole move (and the projects file); the person's note is only renamed
    status = git(wiki, "show", "--name-status", "--format=%s", report["git_commit"]).splitlines()
    assert status[0] == "project rename: acme → acme-api"
    renames = {line.split("\t")[1]: line.split("\t")[2] for line in status if line.startswith("R")}
    assert {old.removeprefix("acme/") for old in renames} == set(before)
    assert renames["acme/notes/release-checklist.md"] == "acme-api/notes/release-checklist.md"
    assert any(line.endswith(".ai-memory/projects.json") for line in status)
    assert not (wiki / "acme").exists()
    assert (wiki / "acme-api" / "notes" / "release-checklist.md").read_text() == HAND_WRITTEN
    fact = next(p for p in (wiki / "acme-api" / "facts").iterdir())
    assert "project: acme-api\n" in fact.read_text()

    # search by the old name and the new finds the pages at their new paths
    for name in ("acme", "acme-api"):
        assert any(p.startswith("acme-api/facts/") for p in hits(acme, "billing service Tuesdays", name))
    wait_until(lambda: "acme-api/notes/release-checklist.md" in hits(acme, "release checklist announce", "acme"))

    # the session, its handoff and the message follow; a hook naming the old project lands under the new
    page = rows(acme, "SELECT project, page_path FROM sessions WHERE id = ?", SESSION)[0]
    assert page[0] == "acme-api" and page[1].startswith("acme-api/sessions/")
    assert (wiki / page[1]).exists()
    status, body, _ = acme.request("GET", "/v1/handoffs?project=acme")
    assert [(h["project"], h["page_path"]) for h in body["handoffs"]] == [("acme-api", page[1])]
    status, body, _ = acme.request("GET", "/v1/messages?project=acme")
    assert [m["to_project"] for m in body["messages"]] == ["acme-api"]
    hook(acme, "UserPromptSubmit", "after-rename", "/home/dev/acme", prompt="Where is the invoice exporter?")
    assert rows(acme, "SELECT project FROM observations WHERE session_id = 'after-rename'") == [("acme-api",)]
    assert rows(acme, "SELECT COUNT(*) FROM observations WHERE project = 'acme'") == [(0,)]
    status, body, _ = acme.request("GET", "/v1/briefing?cwd=/home/dev/acme&agent=claude")
    assert status == 200 and body["project"] == "acme-api"
    listing = ok_json(acme, "project", "list")
    assert {"acme-api"} <= {p["project"] for p in listing["projects"]} and listing["aliases"] == {"acme": "acme-api"}
    assert "acme" not in {p["project"] for p in listing["projects"]}
    assert "old names: acme → acme-api" in cli(acme, "project", "list").stdout

    check = cli(acme, "reindex", "--check")
    assert check.returncode == 0, check.stdout


def test_a_page_written_under_the_old_name_lands_under_the_new(acme: Daemon) -> None:
    """A writer that still names the old folder (here a restore of a version from before the
    rename) writes under the new name: the old folder is never re-created."""
    wiki = acme.data_dir / "wiki"
    fact = next(p for p in (wiki / "acme-api" / "facts").iterdir())
    fact.write_text(fact.read_text().replace("Tuesdays", "Thursdays"))
    renamed = git(wiki, "log", "--format=%H", "--grep", "project rename: acme → acme-api").split()[0]
    before = git(wiki, "rev-parse", f"{renamed}^").strip()
    restored = ok_json(acme, "restore-page", f"acme/facts/{fact.name}", "--at", before)
    assert restored["path"] == f"acme-api/facts/{fact.name}" and restored["changed"]
    assert not (wiki / "acme").exists()
    text = fact.read_text()
    assert "Tuesdays" in text and "project: acme-api\n" in text
    wait_until(lambda: git(wiki, "status", "--porcelain").strip() == "")
    assert not (wiki / "acme").exists()
    assert rows(acme, "SELECT COUNT(*) FROM pages WHERE path LIKE 'acme/%' OR project = 'acme'") == [(0,)]


def test_the_old_name_still_resolves_after_a_full_reindex(acme: Daemon) -> None:
    done = cli(acme, "reindex")
    assert done.returncode == 0, done.stderr
    assert rows(acme, "SELECT COUNT(*) FROM observations WHERE project = 'acme'") == [(0,)]
    assert rows(acme, "SELECT project FROM sessions WHERE id = ?", SESSION) == [("acme-api",)]
    assert any(p.startswith("acme-api/facts/") for p in hits(acme, "billing service Tuesdays", "acme"))
    hook(acme, "UserPromptSubmit", "after-reindex", "/home/dev/acme", prompt="Rerun the export")
    assert rows(acme, "SELECT project FROM observations WHERE session_id = 'after-reindex'") == [("acme-api",)]
    # another project cannot take over acme, which clients still mean as acme-api
    fails(cli(acme, "project", "rename", "beta", "acme"), 1, "acme is an old name of acme-api", "another name")
    # the name can be taken back: acme-api → acme again, and acme-api is then the old name
    back = ok_json(acme, "project", "rename", "acme-api", "acme")
    assert back["git_commit"] and (acme.data_dir / "wiki" / "acme").is_dir()
    assert rows(acme, "SELECT alias, project FROM project_aliases") == [("acme-api", "acme")]
    assert cli(acme, "reindex", "--check").returncode == 0


def test_rename_without_a_daemon_works_on_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_cli(data, "reindex").returncode == 0  # lays the data dir out, with its wiki repository
    note = data / "wiki" / "scratch" / "ideas.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\ntitle: Ideas\nproject: scratch\n---\nA queue per tenant.\n")
    done = run_cli(data, "project", "rename", "scratch", "tenancy", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["frontmatter_rewritten"] == ["tenancy/ideas.md"]
    moved = (data / "wiki" / "tenancy" / "ideas.md").read_text()
    assert moved == "---\ntitle: Ideas\nproject: tenancy\n---\nA queue per tenant.\n"
    assert "tenancy/ideas.md" in git(data / "wiki", "show", "--name-only", "--format=", "HEAD")
    assert run_cli(data, "reindex", "--check").returncode == 0


def test_a_crash_after_the_commit_heals_at_the_next_start(tmp_path: Path) -> None:
    """The verb's commit is its atomic step: with the files moved and committed but no row
    changed (the daemon died right after it), the next start brings the index in step."""
    from ai_memory.wiki.project_moves import MovePlan, carry_out, plan_folder, read_map

    daemon = Daemon(tmp_path / "data").start()
    try:
        hook(daemon, "UserPromptSubmit", "legacy-s", "/home/dev/legacy", prompt="Port the legacy cron jobs")
        hook(daemon, "SessionEnd", "legacy-s", "/home/dev/legacy")
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": "Legacy cron runs at 02:00.",
                                                               "kind": "fact", "project": "legacy"})
        assert status == 201, body
        wait_until(lambda: rows(daemon, "SELECT 1 FROM handoffs WHERE session_id = 'legacy-s' AND page_path IS NOT NULL"))
        daemon.request("POST", "/v1/query", {"q": "legacy cron", "project": "legacy"})  # counts an access
        wait_until(lambda: rows(daemon, "SELECT 1 FROM page_stats WHERE path LIKE 'legacy/facts/%'"))
    finally:
        daemon.stop()
    wiki = tmp_path / "data" / "wiki"
    plan = MovePlan("rename", "legacy", "modern", read_map(wiki)[0].renamed("legacy", "modern"))
    assert carry_out(wiki, plan_folder(wiki, plan, []), "project rename: legacy → modern")
    daemon = Daemon(tmp_path / "data").start()
    try:
        assert rows(daemon, "SELECT DISTINCT project FROM observations WHERE session_id = 'legacy-s'") == [("modern",)]
        # the rows naming a page by path follow it too, though no verb moved them
        for sql in ("SELECT page_path FROM sessions WHERE id = 'legacy-s'",
                    "SELECT page_path FROM handoffs WHERE session_id = 'legacy-s'",
                    "SELECT path FROM page_stats WHERE path LIKE '%/facts/%'"):
            found = rows(daemon, sql)
            assert found and all(r[0].startswith("modern/") and (wiki / r[0]).exists() for r in found), (sql, found)
        assert any(p.startswith("modern/facts/") for p in hits(daemon, "legacy cron", "legacy"))
        status, body, _ = daemon.request("GET", "/status")
        assert body["wiki"]["project_aliases"] == 1 and body["wiki"]["projects_file"] == []
        assert cli(daemon, "reindex", "--check").returncode == 0
    finally:
        daemon.stop()


def test_a_link_where_the_projects_file_goes_refuses_before_anything_moves(tmp_path: Path) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside"
    assert run_cli(data, "reindex").returncode == 0
    (data / "wiki" / "scratch").mkdir()
    (data / "wiki" / "scratch" / "ideas.md").write_text("---\nproject: scratch\n---\nA queue per tenant.\n")
    outside.mkdir()
    (data / "wiki" / ".ai-memory").symlink_to(outside)
    done = run_cli(data, "project", "rename", "scratch", "tenancy")
    assert done.returncode == 1 and "not a plain file" in done.stderr, done.stderr
    assert (data / "wiki" / "scratch" / "ideas.md").exists() and not (data / "wiki" / "tenancy").exists()
    assert list(outside.iterdir()) == []
