"""``as_of`` reads page history derived from the wiki's git history: it survives a reindex,
``reindex --check`` compares it, and its scores are on today's scale."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pygit2

from conftest import Daemon, run_cli
from wiki_helpers import git, wait_until


def _search(daemon: Daemon, q: str, **extra) -> list[dict]:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": q, "project": "asof", "k": 5, **extra})
    assert status == 200, body
    return body["hits"]


def _head_time(daemon: Daemon) -> int:
    repo = pygit2.Repository(str(daemon.data_dir / "wiki"))
    return repo[repo.head.target].commit_time


def test_as_of_finds_the_old_fact_before_and_after_a_reindex(daemon: Daemon) -> None:
    status, old, _ = daemon.request("POST", "/v1/pages", {"text": "Session tokens live 15 minutes.",
                                                          "kind": "fact", "project": "asof"})
    assert status == 201, old
    written = _head_time(daemon)
    wait_until(lambda: time.time() >= written + 1.05, timeout=3)  # git times are whole seconds
    then = datetime.fromtimestamp(written + 0.999, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    status, new, _ = daemon.request("POST", "/v1/pages", {"text": "Session tokens live 30 minutes.",
                                                          "kind": "fact", "project": "asof", "supersedes": old["id"]})
    assert status == 201, new

    def old_fact_found() -> bool:
        hits = _search(daemon, "session tokens minutes", as_of=then)
        return bool(hits) and hits[0]["path"] == old["path"] and "15 minutes" in hits[0]["snippet"]

    wait_until(old_fact_found)
    assert [h["path"] for h in _search(daemon, "session tokens minutes")][:1] == [new["path"]]

    reindexed = run_cli(daemon.data_dir, "reindex", "--url", daemon.url)
    assert reindexed.returncode == 0, reindexed.stderr
    assert old_fact_found()  # the history was read again from git
    check = run_cli(daemon.data_dir, "reindex", "--check")
    assert check.returncode == 0 and "no drift" in check.stdout, check.stdout + check.stderr


def test_reindex_check_reports_a_history_that_differs_from_git(daemon: Daemon) -> None:
    status, page, _ = daemon.request("POST", "/v1/pages", {"text": "Queues drain every second.",
                                                           "kind": "fact", "project": "asof"})
    assert status == 201
    wait_until(lambda: run_cli(daemon.data_dir, "reindex", "--check").returncode == 0)
    daemon.stop()
    import sqlite3

    conn = sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite")
    conn.execute("DELETE FROM page_history WHERE path = ?", (page["path"],))
    conn.commit()
    conn.close()
    check = run_cli(daemon.data_dir, "reindex", "--check")
    assert check.returncode == 1 and f"page history differs from git: {page['path']}" in check.stdout


def test_a_commit_made_outside_ai_memory_enters_the_history(daemon: Daemon) -> None:
    wiki = daemon.data_dir / "wiki"
    note = wiki / "asof" / "notes" / "hand.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Hand note\n\nThe harbour crane is named ospreyline.\n")
    wait_until(lambda: "asof/notes/hand.md" in git(wiki, "ls-files"))
    wait_until(lambda: bool(_search(daemon, "ospreyline", as_of="2999-01-01")))


def test_as_of_scores_are_on_the_scale_of_todays_search_and_explained(daemon: Daemon) -> None:
    status, page, _ = daemon.request("POST", "/v1/pages", {"text": "Webhook retries back off exponentially.",
                                                           "kind": "decision", "project": "asof"})
    assert status == 201
    wait_until(lambda: bool(_search(daemon, "webhook retries", as_of="2999-01-01")))
    [then] = _search(daemon, "webhook retries", as_of="2999-01-01", explain=True)[:1]
    [now] = _search(daemon, "webhook retries")[:1]
    assert 0 < then["score"] <= 1 and 0 < now["score"] <= 1  # both on the reranker's scale
    assert abs(then["score"] - now["score"]) < 0.5, (then["score"], now["score"])
    assert "formula" in then["explain"] and then["explain"]["features"]["page_text"] == 1.0
