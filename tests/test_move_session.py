"""``ai-memory move-session``: a session recorded under the wrong project moves, with its events,
its session page and its handoff, and stays moved through a reindex."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest

from ai_memory.retrieval.fts import search_observations
from conftest import Daemon
from lifecycle_helpers import cli, rows
from wiki_helpers import git, wait_until

MOVED = "a0b1c2d3-0000-4000-8000-0000000000b1"
STAYS = "e4f5a6b7-0000-4000-8000-0000000000b2"


def session(daemon: Daemon, session_id: str, prompt: str) -> str:
    for event, extra in (("UserPromptSubmit", {"prompt": prompt}), ("SessionEnd", {})):
        status, body = daemon.post_hook({"session_id": session_id, "hook_event_name": event,
                                         "cwd": "/home/dev/wrong", **extra})
        assert status == 202, body
    wait_until(lambda: rows(daemon, "SELECT 1 FROM sessions WHERE id = ? AND page_path IS NOT NULL", session_id))
    return rows(daemon, "SELECT page_path FROM sessions WHERE id = ?", session_id)[0][0]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("move-session") / "data").start()
    status, body, _ = d.request("POST", "/v1/pages",
                                {"text": "Right ships from main.", "kind": "fact", "project": "right"})
    assert status == 201, body
    yield d
    d.stop()


def test_move_session_moves_its_events_page_and_handoff(daemon: Daemon) -> None:
    old_page = session(daemon, MOVED, "Migrate the ledger tables to the new schema")
    session(daemon, STAYS, "Tidy the wrong project's README")
    assert old_page.startswith("wrong/sessions/")
    wiki = daemon.data_dir / "wiki"

    plan = cli(daemon, "move-session", MOVED, "--to", "right", "--dry-run", "--json")
    assert plan.returncode == 0, plan.stderr
    new_page = "right/" + old_page.split("/", 1)[1]
    assert json.loads(plan.stdout)["moved"] == [{"from": old_page, "to": new_page}]
    assert (wiki / old_page).exists()

    done = cli(daemon, "move-session", MOVED, "--to", "right")
    assert done.returncode == 0, done.stderr
    assert f"{old_page} → {new_page}" in done.stdout
    # the move's commit: a reconcile may commit a project's generated index.md just after it
    commits = git(wiki, "log", "-n", "5", "--name-status", "--format=@@%s").split("@@")
    changed = next((c for c in commits if old_page in c), "")
    assert f"R100\t{old_page}\t{new_page}" not in changed  # renamed with its project line changed
    assert old_page in changed and new_page in changed and ".ai-memory/projects.json" in changed
    assert not (wiki / old_page).exists() and "project: right\n" in (wiki / new_page).read_text()

    assert set(rows(daemon, "SELECT project FROM observations WHERE session_id = ?", MOVED)) == {("right",)}
    assert rows(daemon, "SELECT project, page_path FROM sessions WHERE id = ?", MOVED) == [("right", new_page)]
    assert rows(daemon, "SELECT project, page_path FROM handoffs WHERE session_id = ?", MOVED) == [("right", new_page)]
    assert set(rows(daemon, "SELECT project FROM observations WHERE session_id = ?", STAYS)) == {("wrong",)}
    status, body, _ = daemon.request("POST", "/v1/query", {"q": "migrate ledger tables schema", "project": "right"})
    assert new_page in [h["path"] for h in body["hits"]]
    with sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite") as conn:  # the turns' full-text rows moved too
        conn.execute("INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)")
        found = {conn.execute("SELECT session_id FROM observations WHERE rowid = ?", (hit.rowid,)).fetchone()[0]
                 for hit in search_observations(conn, "ledger tables", projects={"right"})}
        assert found == {MOVED} and not search_observations(conn, "ledger tables", projects={"wrong"})

    # a late event of the session, still from the wrong directory, follows it
    status, _ = daemon.post_hook({"session_id": MOVED, "hook_event_name": "Stop", "cwd": "/home/dev/wrong"})
    assert status == 202
    assert set(rows(daemon, "SELECT project FROM observations WHERE session_id = ?", MOVED)) == {("right",)}
    assert cli(daemon, "reindex", "--check").returncode == 0

    assert cli(daemon, "reindex").returncode == 0
    assert set(rows(daemon, "SELECT project FROM observations WHERE session_id = ?", MOVED)) == {("right",)}
    assert rows(daemon, "SELECT project FROM sessions WHERE id = ?", MOVED) == [("right",)]
    assert set(rows(daemon, "SELECT project FROM observations WHERE session_id = ?", STAYS)) == {("wrong",)}


def test_move_session_refusals(daemon: Daemon) -> None:
    unknown = cli(daemon, "move-session", "no-such-session", "--to", "right")
    assert unknown.returncode == 1 and unknown.stderr.strip() == "ai-memory: no such session (no-such-session)"
    same = cli(daemon, "move-session", STAYS, "--to", "wrong")
    assert same.returncode == 1 and "is in wrong already" in same.stderr
    status, body, _ = daemon.request("POST", f"/v1/sessions/{STAYS}/move", {"project": "///"})
    assert status == 400 and body["error"] == "bad project name"


def test_a_page_written_while_its_session_moves_lands_in_the_new_project(tmp_path) -> None:
    """The model's summary of a session's page, written while the session moves (its writer
    chose the page's path, then waited for the git lock the move holds), goes to the new folder:
    never a second copy of the session's page left in the old one. Each session moves a little
    later after its compile than the one before, so the move meets the consolidation at
    different points of its work."""
    import time

    from llm_helpers import PROPOSAL, llm_config, start_daemon
    from llm_stub import StubServer

    stub = StubServer()
    stub.model.default_consolidation = lambda prompt: PROPOSAL
    data = tmp_path / "data"
    data.mkdir()
    (data / "llm.key").write_text("sk-stub\n")
    daemon = start_daemon(data, llm_config(stub, api_key_file="llm.key"))
    sessions = [f"race-{n}" for n in range(8)]
    try:
        for n, sid in enumerate(sessions):
            session(daemon, sid, f"Sketch idea {n} for the importer")
            time.sleep(0.02 * n)  # the interleaving, spread on purpose
            status, body, _ = daemon.request("POST", f"/v1/sessions/{sid}/move", {"project": "right"})
            assert status == 200, body
        wait_until(lambda: rows(daemon, "SELECT COUNT(*) FROM llm_jobs WHERE state = 'done'") == [(8,)], timeout=30)
        wait_until(lambda: git(data / "wiki", "status", "--porcelain").strip() == "", timeout=30)
        for sid in sessions:
            pages = sorted(p.relative_to(data / "wiki").as_posix() for p in (data / "wiki").rglob("*.md")
                           if f"session_id: {sid}\n" in p.read_text())
            assert len(pages) == 1 and pages[0].startswith("right/"), pages
            assert rows(daemon, "SELECT page_path FROM sessions WHERE id = ?", sid) == [(pages[0],)]
    finally:
        daemon.stop()
        stub.close()


def test_a_session_page_bound_for_its_old_folder_is_placed_in_the_new_one(tmp_path) -> None:
    """Where a page is written once its session moved (what the page's writer chose before the
    move published the projects map): the new project's folder, its project line changed."""
    from ai_memory.core.project_map import ProjectMap
    from ai_memory.wiki.project_moves import current_path

    wiki = tmp_path / "wiki"
    (wiki / "right" / "sessions").mkdir(parents=True)
    text = "---\ntype: Session Summary\nproject: wrong\nsession_id: s-9\n---\n# Sketch\n"
    pmap = ProjectMap(sessions={"s-9": "right"})
    assert current_path(wiki, pmap, "wrong/sessions/2026-12-06-s-9.md", text) == (
        "right/sessions/2026-12-06-s-9.md", text.replace("project: wrong", "project: right"))
    other = text.replace("session_id: s-9", "session_id: s-10")
    assert current_path(wiki, pmap, "wrong/sessions/2026-12-06-s-10.md", other) == (
        "wrong/sessions/2026-12-06-s-10.md", other)
    (wiki / "right" / "sessions" / "2026-12-06-s-9.md").write_text("a person's note\n")
    assert current_path(wiki, pmap, "wrong/sessions/2026-12-06-s-9.md", text)[0] == \
        "right/sessions/2026-12-06-s-9-from-wrong.md"  # never over another file
