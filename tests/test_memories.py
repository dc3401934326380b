"""Structured memories: store, duplicate guard, corrections by superseding, expiry, scope, meta."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from ai_memory.core.memory import normalized_hash
from conftest import Daemon
from wiki_helpers import git, wait_until


def remember(daemon: Daemon, expect: int = 201, **body) -> dict:
    body.setdefault("project", "acme-api")
    body.setdefault("kind", "fact")
    status, answer, _ = daemon.request("POST", "/v1/pages", body)
    assert status == expect, answer
    return answer


def search(daemon: Daemon, q: str, **extra) -> list[dict]:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": q, "project": "acme-api", **extra})
    assert status == 200, body
    return body["hits"]


def frontmatter(daemon: Daemon, rel: str) -> dict:
    text = (daemon.data_dir / "wiki" / rel).read_text()
    return yaml.safe_load(text.split("---\n")[1])


def test_a_memory_lands_in_its_family_committed_and_searchable(daemon: Daemon) -> None:
    stored = remember(daemon, text="The billing service retries webhooks five times with exponential backoff.",
                      kind="decision", tags=["billing"], entities=["Stripe"], source="design review")
    assert stored["path"].startswith("acme-api/decisions/") and stored["path"].endswith(".md")
    meta = frontmatter(daemon, stored["path"])
    assert meta["id"] == stored["id"] and meta["type"] == "Decision" and meta["kind"] == "decision"
    assert meta["tags"] == ["billing"] and meta["entities"] == ["Stripe"] and meta["scope"] == "project"
    assert stored["path"] in git(daemon.data_dir / "wiki", "ls-files")  # committed before the answer
    assert [h["path"] for h in search(daemon, "webhook retries backoff")][:1] == [stored["path"]]
    assert search(daemon, "webhook retries", kind=["decision"])[0]["path"] == stored["path"]
    assert search(daemon, "webhook retries", kind=["gotcha"]) == []


@pytest.mark.parametrize("body, reason", [
    ({"text": "x", "kind": "fact"}, "missing project"),
    ({"text": "x", "kind": "opinion", "project": "p"}, "unknown kind"),
    ({"text": " ", "kind": "fact", "project": "p"}, "missing text"),
    ({"text": "x", "kind": "fact", "project": "p", "scope": "team"}, "unknown scope"),
    ({"text": "x", "kind": "fact", "project": "p", "expires_at": "soon"}, "expires_at"),
    ({"text": "x", "kind": "fact", "project": "../etc"}, "bad project name"),
])
def test_bad_writes_get_a_clear_400_and_write_nothing(daemon: Daemon, body: dict, reason: str) -> None:
    status, answer, _ = daemon.request("POST", "/v1/pages", body)
    assert status == 400 and reason in answer["error"] + (answer["detail"] or "")
    pages = [p for p in (daemon.data_dir / "wiki").rglob("*.md") if ".git" not in p.parts and p.name != "README.md"]
    assert pages == []


def test_duplicates_are_refused_with_the_match(daemon: Daemon) -> None:
    first = remember(daemon, text="Deploys go through the staging cluster first.")
    again = remember(daemon, 409, text="  deploys go through the STAGING cluster first ")
    assert again["id"] == first["id"] and again["path"] == first["path"] and "duplicate" in again["error"]
    remember(daemon, text="Deploys go through the staging cluster first.", kind="rule")  # another kind: fine
    files = [p for p in (daemon.data_dir / "wiki" / "acme-api").rglob("*.md") if p.name != "index.md"]
    assert len(files) == 2


def test_concurrent_identical_writes_store_one(daemon: Daemon) -> None:
    def write(_: int) -> int:
        return daemon.request("POST", "/v1/pages", {"text": "Use UTC everywhere.", "kind": "rule",
                                                    "project": "acme-api"})[0]

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = sorted(pool.map(write, range(8)))
    assert statuses == [201] + [409] * 7


def test_idempotency_key_returns_the_first_write(daemon: Daemon) -> None:
    first = remember(daemon, text="Cache TTL is 300 seconds.", idempotency_key="local-1")
    again = remember(daemon, 200, text="Cache TTL is 300 seconds.", idempotency_key="local-1")
    assert again["id"] == first["id"] and again["created"] is False


def test_a_correction_chain_of_three(daemon: Daemon) -> None:
    v1 = remember(daemon, text="The API rate limit is 100 requests per minute.")
    v2 = remember(daemon, text="The API rate limit is 200 requests per minute.", supersedes=v1["id"],
                  supersede_reason="raised in the March release")
    v3 = remember(daemon, text="The API rate limit is 500 requests per minute per token.", supersedes=v2["path"],
                  supersede_reason="limits became per token")
    hits = search(daemon, "API rate limit requests per minute")
    assert [h["path"] for h in hits] == [v3["path"]]
    every = {h["path"] for h in search(daemon, "API rate limit requests per minute", include_superseded=True)}
    assert every == {v1["path"], v2["path"], v3["path"]}
    assert frontmatter(daemon, v1["path"])["superseded_by"] == v2["id"]
    assert frontmatter(daemon, v2["path"])["supersede_reason"] == "limits became per token"
    status, page, _ = daemon.request("GET", f"/v1/pages?id={v2['id']}")
    assert status == 200
    assert [(p["id"], p["reason"]) for p in page["lineage"]] == [
        (v1["id"], "raised in the March release"), (v2["id"], "limits became per token"),
        (v3["id"], "limits became per token")]
    history = git(daemon.data_dir / "wiki", "log", "--name-only", "--format=")
    assert all(v["path"] in history for v in (v1, v2, v3))
    again = remember(daemon, 409, text="The rate limit is unlimited.", supersedes=v1["id"])
    assert again["id"] == v2["id"]  # correct the newest version, not an old one


def test_superseding_something_missing_is_404(daemon: Daemon) -> None:
    status, body, _ = daemon.request("POST", "/v1/pages", {"text": "x", "kind": "fact", "project": "acme-api",
                                                           "supersedes": "nope"})
    assert status == 404 and "supersede" in body["error"]


def test_expired_memories_leave_default_search(daemon: Daemon) -> None:
    remember(daemon, text="The freeze window runs through the holidays.", expires_at="2020-01-01")
    live = remember(daemon, text="The freeze window covers the last week of the quarter.", expires_at="2999-01-01")
    assert [h["path"] for h in search(daemon, "freeze window")] == [live["path"]]


def test_scopes_global_and_private(daemon: Daemon) -> None:
    glob = remember(daemon, text="Prefer ripgrep over grep.", kind="preference", scope="_global")
    assert glob["path"].startswith("_global/preferences/")
    status, body, _ = daemon.request("POST", "/v1/query", {"q": "ripgrep", "project": "other-project"})
    assert [h["path"] for h in body["hits"]] == [glob["path"]]
    mine = remember(daemon, text="My staging password hint is the cat's name.", scope="private", owner="alice")
    assert [h["path"] for h in search(daemon, "staging password hint", owner="alice")] == [mine["path"]]
    assert search(daemon, "staging password hint", owner="bob") == []
    assert search(daemon, "staging password hint") == []


def test_secrets_in_a_memory_are_redacted(daemon: Daemon) -> None:
    stored = remember(daemon, text="CI deploy key is AKIAIOSFODNN7EXAMPLE for the bucket.")
    text = (daemon.data_dir / "wiki" / stored["path"]).read_text()
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "[REDACTED:" in text


def test_meta_counts_what_the_memory_holds(daemon: Daemon) -> None:
    old = remember(daemon, text="Postgres 14 is the database.")
    remember(daemon, text="Postgres 16 is the database.", supersedes=old["id"])
    remember(daemon, text="Never run migrations on Fridays.", kind="rule")
    remember(daemon, text="Old promo ends soon.", expires_at="2020-01-01")
    remember(daemon, text="Tabs over spaces.", kind="preference", scope="_global")
    daemon.post_hook({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit", "prompt": "hi"},
                     agent="codex")
    status, meta, _ = daemon.request("GET", "/v1/meta?project=acme-api")
    assert status == 200
    assert meta["counts"] == {"project": {"fact": 1, "rule": 1}, "_global": {"preference": 1}}
    assert meta["superseded"] == 1 and meta["expired"] == 1
    assert {p["project"] for p in meta["projects"]} >= {"acme-api", "_global"}
    status, everything, _ = daemon.request("GET", "/v1/meta")
    assert any(a["agent"] == "codex" for a in everything["agents"])


def test_near_duplicates_are_refused_by_embedding(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data", env={"AI_MEMORY_EMBED_ENABLED": "1"}).start(timeout=60)
    try:
        wait_until(lambda: daemon.request("GET", "/status")[1]["embeddings"]["ready"], timeout=120, step=0.2)
        first = remember(daemon, text="The deploy pipeline runs the integration tests before every release.")
        near = remember(daemon, 409, text="Before every release the deploy pipeline runs the integration tests.")
        assert near["path"] == first["path"] and "cosine" in near["detail"]
        remember(daemon, text="The deploy pipeline skips integration tests for hotfixes.")  # a different fact
        hits = search(daemon, "which checks happen ahead of shipping a version?")
        assert first["path"] in [h["path"] for h in hits]  # its vector was stored with the write
    finally:
        daemon.stop()


def test_supersession_survives_reindex_and_a_half_finished_correction(daemon: Daemon) -> None:
    v1 = remember(daemon, text="Builds run on Jenkins.")
    v2 = remember(daemon, text="Builds run on GitHub Actions.", supersedes=v1["id"], supersede_reason="migrated")
    daemon.request("POST", "/v1/messages", {"to_project": "acme-api", "body": "kept across reindex"})
    status, report, _ = daemon.request("POST", "/v1/reindex")
    assert status == 200, report
    assert [h["path"] for h in search(daemon, "builds run on")] == [v2["path"]]
    assert daemon.request("GET", "/v1/messages?project=acme-api")[1]["messages"][0]["body"] == "kept across reindex"
    # A crash after the new page was written but before the old one was marked: the new page's
    # `supersedes` alone hides the old one.
    v3 = remember(daemon, text="Deploys are manual.")
    corrected = daemon.data_dir / "wiki" / "acme-api" / "facts" / "deploys-are-automatic.md"
    corrected.write_text(f"---\nid: hand-1\ntype: Fact\nproject: acme-api\nsupersedes: {v3['id']}\n---\n"
                         "Deploys are automatic since the CD rollout.\n")
    wait_until(lambda: [h["path"] for h in search(daemon, "deploys are")] == ["acme-api/facts/deploys-are-automatic.md"])


def test_another_owners_private_page_neither_blocks_nor_leaks(daemon: Daemon) -> None:
    mine = remember(daemon, text="The launch code is in the blue folder.", scope="private", owner="alice",
                    idempotency_key="k-1")
    theirs = remember(daemon, text="The launch code is in the blue folder.", owner="bob", idempotency_key="k-1")
    assert theirs["created"] is True and theirs["id"] != mine["id"] and "blue" not in str(theirs.get("detail"))


def test_deleting_a_freshly_edited_page_keeps_the_edit_in_git(daemon: Daemon) -> None:
    stored = remember(daemon, text="Staging runs on port 8080.")
    page = daemon.data_dir / "wiki" / stored["path"]
    page.write_text(page.read_text().replace("8080", "9090"))
    status, body, _ = daemon.request("DELETE", f"/v1/pages?id={stored['id']}")
    assert status == 200, body
    history = git(daemon.data_dir / "wiki", "log", "--all", "-p", "--", stored["path"])
    assert "9090" in history and not page.exists()


def test_feedback_with_a_non_string_signal_is_a_400(daemon: Daemon) -> None:
    stored = remember(daemon, text="Retries use jitter.")
    status, body, _ = daemon.request("POST", "/v1/feedback", {"path": stored["path"], "signal": ["helpful"]})
    assert status == 400, body


def test_a_private_memory_stays_out_of_the_project_index(daemon: Daemon) -> None:
    remember(daemon, text="Shared fact about the build cache.")
    remember(daemon, text="My private note about the salary sheet.", scope="private", owner="alice")
    index = (daemon.data_dir / "wiki" / "acme-api" / "index.md").read_text()
    assert "build cache" in index and "salary" not in index


def test_the_duplicate_test_folds_case_accents_punctuation_and_spacing() -> None:
    assert normalized_hash("Café, CRÈME!") == normalized_hash("cafe creme")
    assert normalized_hash("Hello,  World.") == normalized_hash("hello world")
    assert normalized_hash("retry budget") != normalized_hash("retry budgets")
