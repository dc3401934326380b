"""A person's Obsidian vault as the wiki (tests/vault/): ai-memory reads it the way Obsidian
does and never damages it. Against a real daemon on the fixture's files."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO, Daemon, run_cli
from wiki_helpers import git, search_paths, wait_until

FIXTURE = REPO / "tests" / "vault"


@pytest.fixture
def vault(data_dir: Path) -> Iterator[Daemon]:
    wiki = data_dir / "wiki"
    shutil.copytree(FIXTURE, wiki)
    d = Daemon(data_dir).start()
    yield d
    if d.proc and d.proc.poll() is None:
        d.stop()


def fixture_bytes(rel: str) -> bytes:
    return (FIXTURE / rel).read_bytes()


def lint_findings(daemon: Daemon, rule: str) -> list[tuple[str, str]]:
    status, report, _ = daemon.request("GET", "/v1/lint")
    assert status == 200, report
    return sorted((f["path"], f["detail"]) for f in report["findings"] if f["rule"] == rule)


def test_the_vaults_own_files_survive_becoming_a_wiki(vault: Daemon) -> None:
    wiki = vault.data_dir / "wiki"
    for rel in ("README.md", ".gitignore", "Journal/index.md"):
        assert (wiki / rel).read_bytes() == fixture_bytes(rel), rel
    assert "Journal/2026-01-05.md" in git(wiki, "ls-files")  # the first commit holds them all


def test_plain_notes_are_notes_not_broken_pages(vault: Daemon) -> None:
    _, status, _ = vault.request("GET", "/status")
    assert status["wiki"]["broken_pages"] == []
    assert lint_findings(vault, "broken-frontmatter") == []
    _, page, _ = vault.request("GET", "/v1/pages?path=Journal/2026-01-05.md")
    assert page["type"] == "Note" and page["title"] == "Retry budget review" and page["problems"] == []
    _, page, _ = vault.request("GET", "/v1/pages?path=Concepts/Artificial%20intelligence.md")
    assert page["title"] == "Artificial intelligence"  # no heading: the file name
    # a hand-written index.md is a note like any other
    assert "Journal/index.md" in search_paths(vault, "own index of the journal")


def test_lint_reports_exactly_the_links_obsidian_shows_unresolved(vault: Daemon) -> None:
    assert lint_findings(vault, "broken-link") == [
        ("Journal/2026-01-05.md", "links to Postmortem 2026-01, which is no page"),
        ("Plans/drafts.md", "links to Nowhere, which is no page"),
        ("Plans/drafts.md", "links to missing.png, which is no page"),
        ("Plans/drafts.md", "links to notes/gone.md, which is no page"),
    ]
    assert lint_findings(vault, "orphan") == []  # links by name, path, alias and embed all count


def test_a_folder_of_notes_is_no_project_and_its_index_is_never_replaced(vault: Daemon) -> None:
    wiki = vault.data_dir / "wiki"
    note = wiki / "Journal" / "2026-01-06.md"
    note.write_text("# Another day\n\nWrote about cobaltheron.\n")
    wait_until(lambda: "Journal/2026-01-06.md" in search_paths(vault, "cobaltheron"))
    wait_until(lambda: "Journal/2026-01-06.md" in git(wiki, "ls-files"))
    assert (wiki / "Journal" / "index.md").read_bytes() == fixture_bytes("Journal/index.md")
    assert not any((wiki / folder / "index.md").exists() for folder in ("Concepts", "Plans", "attachments"))
    _, meta, _ = vault.request("GET", "/v1/meta")
    assert not {"Journal", "Concepts", "Plans"} & {p["project"] for p in meta["projects"]}


def test_an_index_md_ai_memory_did_not_write_is_refused_and_reported(vault: Daemon) -> None:
    wiki = vault.data_dir / "wiki"
    mine = wiki / "acme-api" / "index.md"
    mine.parent.mkdir()
    mine.write_text("# acme-api\n\nMy hand-kept list of what matters.\n")
    wait_until(lambda: "acme-api/index.md" in git(wiki, "ls-files"))
    status, body, _ = vault.request("POST", "/v1/pages", {"text": "Deploys need a green build.", "kind": "rule",
                                                          "project": "acme-api"})
    assert status == 201, body
    assert mine.read_text() == "# acme-api\n\nMy hand-kept list of what matters.\n"
    assert lint_findings(vault, "index-blocked") == [
        ("acme-api/index.md", "ai-memory did not write this file, so the project's generated index is not written here")]
    _, status_body, _ = vault.request("GET", "/status")
    assert status_body["wiki"]["blocked_indexes"] == ["acme-api/index.md"]
    plain = run_cli(vault.data_dir, "status", "--url", vault.url)
    assert "acme-api/index.md" in plain.stdout, plain.stdout


def test_an_edit_to_the_generated_index_reaches_git_before_it_is_rewritten(vault: Daemon) -> None:
    wiki = vault.data_dir / "wiki"
    index = wiki / "acme-api" / "index.md"
    status, _, _ = vault.request("POST", "/v1/pages", {"text": "Tokens live 15 minutes.", "kind": "decision",
                                                       "project": "acme-api"})
    assert status == 201
    wait_until(lambda: index.exists() and "generated: true" in index.read_text())
    index.write_text(index.read_text() + "\nmy note: ask about quartzwren\n")
    status, _, _ = vault.request("POST", "/v1/pages", {"text": "Refresh tokens live a day.", "kind": "decision",
                                                       "project": "acme-api"})
    assert status == 201
    wait_until(lambda: "quartzwren" not in index.read_text() and "Refresh tokens" in index.read_text())
    assert "quartzwren" in git(wiki, "log", "-p", "--", "acme-api/index.md")
