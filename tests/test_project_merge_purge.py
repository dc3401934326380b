"""``ai-memory project merge`` (never overwrites; the source's name resolves to the destination)
and ``project purge`` (needs --confirm; tombstones; git and the journal keep everything)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Daemon, run_cli
from lifecycle_helpers import cli, hits, ok_json, rows
from wiki_helpers import git, wait_until

WEB_SESSION = "c0ffee00-0000-4000-8000-0000000000c1"
WEB_NOTE = "# Conventions\n\nWeb: tabs, never spaces.\n"
API_NOTE = "# Conventions\n\nApi: snake_case everywhere.\n"


def remember(daemon: Daemon, project: str, text: str) -> str:
    status, body, _ = daemon.request("POST", "/v1/pages", {"text": text, "kind": "fact", "project": project})
    assert status == 201, body
    return body["path"]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("merge-purge") / "data").start()
    yield d
    d.stop()


def test_merge_never_overwrites_and_the_source_resolves_to_the_destination(daemon: Daemon) -> None:
    wiki = daemon.data_dir / "wiki"
    remember(daemon, "web", "The web app bundles with esbuild.")
    remember(daemon, "api", "The api serves on port 8443.")
    for project, text in (("web", WEB_NOTE), ("api", API_NOTE)):
        (wiki / project / "notes").mkdir(parents=True, exist_ok=True)
        (wiki / project / "notes" / "conventions.md").write_text(text)
    for event in ("UserPromptSubmit", "SessionEnd"):
        daemon.post_hook({"session_id": WEB_SESSION, "hook_event_name": event, "cwd": "/home/dev/web",
                          "prompt": "Speed up the esbuild bundle"})
    wait_until(lambda: rows(daemon, "SELECT 1 FROM handoffs WHERE session_id = ?", WEB_SESSION))
    wait_until(lambda: len(rows(daemon, "SELECT 1 FROM pages WHERE path LIKE '%/notes/conventions.md'")) == 2)
    wait_until(lambda: (wiki / "web" / "index.md").exists())

    plan = ok_json(daemon, "project", "merge", "web", "api", "--dry-run")
    assert plan["renamed"] == [{"from": "web/notes/conventions.md", "to": "api/notes/conventions-from-web.md"}]
    assert (wiki / "web").is_dir()

    done = cli(daemon, "project", "merge", "web", "api")
    assert done.returncode == 0, done.stderr
    assert "renamed (the name was taken): web/notes/conventions.md → api/notes/conventions-from-web.md" in done.stdout
    assert (wiki / "api" / "notes" / "conventions.md").read_text() == API_NOTE
    assert (wiki / "api" / "notes" / "conventions-from-web.md").read_text() == WEB_NOTE
    assert not (wiki / "web").exists() and not list((wiki / "api").glob("index-from-web*"))
    commit = git(wiki, "show", "--name-status", "--format=%s", "HEAD").splitlines()
    assert commit[0] == "project merge: web → api"
    assert not [line for line in commit[1:] if line.strip() and "web/" not in line and "projects.json" not in line]

    assert any(p.startswith("api/facts/") for p in hits(daemon, "bundles with esbuild", "web"))
    assert "api/notes/conventions-from-web.md" in hits(daemon, "tabs never spaces", "web")
    assert rows(daemon, "SELECT project FROM handoffs WHERE session_id = ?", WEB_SESSION) == [("api",)]
    status, _ = daemon.post_hook({"session_id": "web-later", "hook_event_name": "UserPromptSubmit",
                                  "cwd": "/home/dev/web", "prompt": "Where is the bundle config?"})
    assert status == 202
    assert rows(daemon, "SELECT project FROM observations WHERE session_id = 'web-later'") == [("api",)]
    assert cli(daemon, "reindex", "--check").returncode == 0


def test_merge_refusals(daemon: Daemon) -> None:
    same = cli(daemon, "project", "merge", "api", "api")
    assert same.returncode == 1 and "the same" in same.stderr
    again = cli(daemon, "project", "merge", "web", "api")
    assert again.returncode == 1 and "web is an old name of api" in again.stderr
    missing = cli(daemon, "project", "merge", "api", "nope")
    assert missing.returncode == 1 and missing.stderr.strip().startswith("ai-memory: no project nope")
    status, body, _ = daemon.request("POST", "/v1/projects/merge", {"from": "api", "to": "web"})
    assert status == 409 and body["error"] == "web is an old name of api"
    status, user, _ = daemon.request("POST", "/v1/users", {"name": "bob"})
    assert status == 201, user
    bob = {"Authorization": f"Bearer {user['token']}"}
    for path, verb in (("/v1/projects/rename", {"from": "api", "to": "x"}),
                       ("/v1/projects/merge", {"from": "api", "to": "x"}),
                       ("/v1/projects/purge", {"project": "api", "confirm": True}),
                       ("/v1/sessions/s/move", {"project": "x"})):
        status, body, _ = daemon.request("POST", path, verb, headers=bob)
        assert status == 403 and body["error"] == "admin only", (path, body)


def test_pages_left_under_an_old_name_are_reported_and_brought_home(daemon: Daemon) -> None:
    wiki = daemon.data_dir / "wiki"
    late = wiki / "web" / "notes" / "cdn.md"  # synced from a machine that had not seen the merge
    late.parent.mkdir(parents=True)
    late.write_text("---\nproject: web\n---\n# CDN\n\nWeb: the CDN cache purges at midnight.\n")
    quoted = wiki / "api" / "notes" / "quoted.md"  # a project line no exact rewrite can change
    quoted.write_text('---\n"project": web\n---\n# Quoted\n\nWeb: a quoted key.\n')
    wait_until(lambda: len(rows(daemon, "SELECT 1 FROM pages WHERE path IN (?, ?)",
                                "web/notes/cdn.md", "api/notes/quoted.md")) == 2)
    left = daemon.request("GET", "/status")[1]["wiki"]["pages_under_old_names"]
    assert left == {"web": {"project": "api", "pages": 2}}
    assert "2 pages still under the old name web (ai-memory project merge web api" in cli(daemon, "status").stdout
    linted = cli(daemon, "lint", "--json")
    assert linted.stdout, linted.stderr
    found = json.loads(linted.stdout)["findings"]
    assert [(f["path"], f["fix"][:36]) for f in found if f["rule"] == "old-project-name"] == \
        [("web/", "run: ai-memory project merge web api")]

    plan = ok_json(daemon, "project", "merge", "web", "api", "--dry-run")
    assert plan["moved"] == [{"from": "web/notes/cdn.md", "to": "api/notes/cdn.md"}]
    assert plan["frontmatter_not_rewritten"] == ["api/notes/quoted.md"]
    done = cli(daemon, "project", "rename", "web", "api")  # either verb, toward the name it now means
    assert done.returncode == 0, done.stderr
    assert "project line not rewritten (change it by hand): api/notes/quoted.md" in done.stdout
    assert not late.exists() and (wiki / "api" / "notes" / "cdn.md").read_text().startswith("---\nproject: api\n")
    assert "api/notes/cdn.md" in hits(daemon, "CDN cache purges at midnight", "api")
    wait_until(lambda: daemon.request("GET", "/status")[1]["wiki"]["pages_under_old_names"] ==
               {"web": {"project": "api", "pages": 1}})  # the quoted one, until a person changes it
    assert cli(daemon, "reindex", "--check").returncode == 0
    refused = cli(daemon, "project", "merge", "web", "scratch")
    assert refused.returncode == 1 and "project merge web api" in refused.stderr


def test_purge_needs_confirm_and_leaves_tombstones_git_history_and_the_journal(daemon: Daemon) -> None:
    wiki = daemon.data_dir / "wiki"
    paths = sorted(remember(daemon, "scratch", text) for text in ("Scratch idea one: a bloom filter.",
                                                                   "Scratch idea two: a skip list."))
    daemon.post_hook({"session_id": "scratch-s", "hook_event_name": "UserPromptSubmit", "cwd": "/home/dev/scratch",
                      "prompt": "Try a bloom filter"})
    events = rows(daemon, "SELECT COUNT(*) FROM observations")

    refused = cli(daemon, "project", "purge", "scratch")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--confirm" in refused.stderr
    status, body, _ = daemon.request("POST", "/v1/projects/purge", {"project": "scratch"})
    assert status == 400 and "confirm" in body["error"]
    assert all((wiki / p).exists() for p in paths)
    assert ok_json(daemon, "project", "purge", "scratch", "--dry-run")["removed"] == paths

    report = ok_json(daemon, "project", "purge", "scratch", "--confirm")
    assert report["removed"] == paths and report["git_commit"]
    assert not any((wiki / p).exists() for p in paths)
    deleted = git(wiki, "show", "--name-status", "--format=", report["git_commit"])
    assert all(f"D\t{p}" in deleted for p in paths)
    assert "bloom filter" in git(wiki, "show", f"{report['git_commit']}^:{paths[0]}")
    status, body, _ = daemon.request("GET", "/v1/tombstones?project=scratch")
    assert sorted((t["path"], t["reason"], t["git_commit"]) for t in body["tombstones"]) == \
        [(p, "purged", report["git_commit"]) for p in paths]
    assert hits(daemon, "bloom filter skip list", "scratch") == []
    assert rows(daemon, "SELECT COUNT(*) FROM observations") == events
    assert cli(daemon, "reindex", "--check").returncode == 0
    missing = cli(daemon, "project", "purge", "nope", "--confirm")
    assert missing.returncode == 1 and "no project nope" in missing.stderr


def test_merge_and_purge_without_a_daemon_work_on_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_cli(data, "reindex").returncode == 0  # lays the data dir out, with its wiki repository
    for project in ("drafts", "docs"):
        (data / "wiki" / project).mkdir()
        (data / "wiki" / project / "plan.md").write_text(f"---\nproject: {project}\n---\nThe {project} plan.\n")
    secret = tmp_path / "secret.md"
    secret.write_text("not the wiki's")
    (data / "wiki" / "drafts" / "link.md").symlink_to(secret)
    merged = run_cli(data, "project", "merge", "drafts", "docs", "--json")
    assert merged.returncode == 0, merged.stderr
    report = json.loads(merged.stdout)
    assert report["renamed"] == [{"from": "drafts/plan.md", "to": "docs/plan-from-drafts.md"}]
    assert report["links_left"] == ["drafts/link.md"] and (data / "wiki" / "drafts" / "link.md").is_symlink()
    assert secret.read_text() == "not the wiki's" and not (data / "wiki" / "docs" / "link.md").exists()
    assert (data / "wiki" / "docs" / "plan.md").read_text() == "---\nproject: docs\n---\nThe docs plan.\n"
    assert (data / "wiki" / "docs" / "plan-from-drafts.md").read_text() == "---\nproject: docs\n---\nThe drafts plan.\n"
    purged = run_cli(data, "project", "purge", "docs", "--confirm", "--json")
    assert purged.returncode == 0, purged.stderr
    assert json.loads(purged.stdout)["removed"] == ["docs/plan-from-drafts.md", "docs/plan.md"]
    with sqlite3.connect(data / "db" / "memory.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM tombstones WHERE reason = 'purged'").fetchone() == (2,)
    assert run_cli(data, "reindex", "--check").returncode == 0


def test_a_move_keeps_line_endings_and_modes_and_finishes_a_move_a_crash_cut_short(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert run_cli(data, "reindex").returncode == 0
    wiki = data / "wiki"
    for project in ("old", "new"):
        (wiki / project).mkdir()
    (wiki / "new" / "keep.md").write_text("---\nproject: new\n---\nNew's own page.\n")
    crlf = wiki / "old" / "crlf.md"  # written on Windows, kept private by its owner
    crlf.write_bytes(b"---\r\ntitle: CRLF\r\nproject: old\r\n---\r\nA Windows page.\r\n")
    crlf.chmod(0o600)
    half = wiki / "old" / "half.md"
    half.write_text("---\nproject: old\n---\nHalf moved.\n")
    os.link(half, wiki / "new" / "half.md")  # a crash between a move's link and its unlink
    merged = run_cli(data, "project", "merge", "old", "new", "--json")
    assert merged.returncode == 0, merged.stderr
    assert json.loads(merged.stdout)["renamed"] == []
    moved = wiki / "new" / "crlf.md"
    assert moved.read_bytes() == b"---\r\ntitle: CRLF\r\nproject: new\r\n---\r\nA Windows page.\r\n"
    assert stat.S_IMODE(moved.stat().st_mode) == 0o600
    assert (wiki / "new" / "half.md").read_text() == "---\nproject: new\n---\nHalf moved.\n"
    assert not (wiki / "old").exists() and not list((wiki / "new").glob("half-from-*"))
    assert run_cli(data, "reindex", "--check").returncode == 0
