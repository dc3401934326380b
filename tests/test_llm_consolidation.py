"""LLM consolidation against the stub provider: both wire formats, the queue, what is written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Daemon
from llm_helpers import (
    PROPOSAL, db, drive_session, frontmatter, generated_pages, job, llm_config, start_daemon, wait_for_state,
)
from llm_stub import StubServer
from wiki_helpers import git, wait_until


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    server = StubServer()
    server.model.default_consolidation = lambda prompt: PROPOSAL
    yield server
    server.close()


@pytest.fixture(scope="module")
def openai_daemon(tmp_path_factory: pytest.TempPathFactory, stub: StubServer) -> Iterator[Daemon]:
    data_dir = tmp_path_factory.mktemp("llm-openai") / "data"
    data_dir.mkdir()
    (data_dir / "llm.key").write_text("sk-stub-openai\n")
    daemon = start_daemon(data_dir, llm_config(stub, api_key_file="llm.key"))
    yield daemon
    daemon.stop()


def test_openai_session_end_writes_summary_and_memories(openai_daemon: Daemon, stub: StubServer,
                                                        claude_fixtures) -> None:
    rel = drive_session(openai_daemon, claude_fixtures, "oa-1")
    done = wait_for_state(openai_daemon, "oa-1", "done")
    assert done["attempts"] == 1 and json.loads(done["outcome"])["stored"] == 2
    call = stub.model.calls("consolidation")[-1]
    assert call.path == "/v1/chat/completions" and call.headers["Authorization"] == "Bearer sk-stub-openai"
    assert call.body["model"] == "stub-model" and call.body["messages"][0]["role"] == "system"
    assert "<ai-memory-data>" in call.body["messages"][1]["content"]  # the record goes in its fence
    page = openai_daemon.data_dir / "wiki" / rel
    meta = frontmatter(page)
    assert meta["generated"]["by"] == "stub-model" and meta["generated"]["at"].endswith("Z")
    text = page.read_text()
    assert "## Summary by stub-model" in text and PROPOSAL["summary"] in text
    assert "## Prompts" in text  # the rules' record is kept under the model's summary
    memories = [p for p in generated_pages(openai_daemon) if frontmatter(p).get("source") == f"[[{rel[:-3]}]]"]
    assert {frontmatter(p)["kind"] for p in memories} == {"gotcha", "decision"}
    assert all(frontmatter(p)["generated"] == meta["generated"] for p in memories)
    assert all(p.parent.parent.name == "acme-api" for p in memories)
    wiki = openai_daemon.data_dir / "wiki"
    wait_until(lambda: f"session summary by stub-model: {rel}" in git(wiki, "log", "--format=%s"))
    status = openai_daemon.request("GET", "/status")[1]["llm"]
    assert status["enabled"] and status["check"] == "ok" and status["queue"]["done"] >= 1
    assert stub.model.calls("models")[0].headers["Authorization"] == "Bearer sk-stub-openai"


def test_the_key_is_never_in_the_wiki_or_the_status(openai_daemon: Daemon, claude_fixtures) -> None:
    drive_session(openai_daemon, claude_fixtures, "oa-key")
    wait_for_state(openai_daemon, "oa-key", "done")
    wiki = openai_daemon.data_dir / "wiki"
    assert not any("sk-stub-openai" in p.read_text(errors="replace") for p in wiki.rglob("*.md"))
    assert "sk-stub-openai" not in json.dumps(openai_daemon.request("GET", "/status")[1])


def test_a_proposal_duplicating_a_memory_is_dropped(openai_daemon: Daemon, stub: StubServer, claude_fixtures) -> None:
    text = "Migrations run before the app starts; never from a request handler."
    status, _, _ = openai_daemon.request("POST", "/v1/pages", {"text": text, "kind": "decision", "project": "acme-api"})
    assert status in (200, 201)
    stub.model.consolidation.append({"summary": "Talked about migrations.", "memories": [
        {"kind": "decision", "title": "When migrations run", "text": text}]})
    drive_session(openai_daemon, claude_fixtures, "oa-dup")
    outcome = json.loads(wait_for_state(openai_daemon, "oa-dup", "done")["outcome"])
    assert outcome["duplicates"] == 1 and outcome["stored"] == 0
    with db(openai_daemon) as conn:
        assert conn.execute("SELECT count(*) FROM pages WHERE body LIKE ?", (f"%{text}%",)).fetchone()[0] == 1


def test_malformed_output_is_retried_then_the_job_fails(openai_daemon: Daemon, stub: StubServer,
                                                        claude_fixtures) -> None:
    stub.model.consolidation.extend([
        "Sure! Here is the summary you asked for.",  # not JSON
        {"summary": "ok", "memories": [{"kind": "opinion", "title": "x", "text": "y"}]},  # not the schema
        {"summary": "ok", "memories": [], "run": "rm -rf /"},  # a key the schema does not allow
        '{"summary": "ok", "memories": []} and some words',
    ])
    before = len(generated_pages(openai_daemon))
    rel = drive_session(openai_daemon, claude_fixtures, "oa-bad")
    rules_text = (openai_daemon.data_dir / "wiki" / rel).read_text()
    failed = wait_for_state(openai_daemon, "oa-bad", "failed")
    assert failed["attempts"] == 4 and "not JSON" in failed["last_error"]  # the last of four answers
    assert (openai_daemon.data_dir / "wiki" / rel).read_text() == rules_text
    assert len(generated_pages(openai_daemon)) == before
    queue = openai_daemon.request("GET", "/status")[1]["llm"]["queue"]
    assert queue["failed"] >= 1 and queue["last_error"]


def test_an_edited_session_page_is_never_overwritten(openai_daemon: Daemon, stub: StubServer,
                                                     claude_fixtures) -> None:
    from llm_stub import HANG

    stub.model.released.clear()
    stub.model.consolidation.append(HANG)
    calls = len(stub.model.calls("consolidation"))
    rel = drive_session(openai_daemon, claude_fixtures, "oa-edit")
    wait_until(lambda: len(stub.model.calls("consolidation")) > calls)  # the model is thinking
    page = openai_daemon.data_dir / "wiki" / rel
    edited = page.read_text().replace("## Prompts", "## Prompts\n\nA note a person added by hand.")
    page.write_text(edited)
    stub.model.release()  # this answer is "{}": malformed; the retry gets the proposal
    outcome = json.loads(wait_for_state(openai_daemon, "oa-edit", "done")["outcome"])
    assert outcome["page"] == "edited, left alone" and page.read_text() == edited


def test_a_repeated_finalize_of_an_unchanged_session_asks_the_model_nothing(openai_daemon: Daemon, stub: StubServer,
                                                                          claude_fixtures) -> None:
    rel = drive_session(openai_daemon, claude_fixtures, "oa-again")
    done = wait_for_state(openai_daemon, "oa-again", "done")
    wiki, page = openai_daemon.data_dir / "wiki", openai_daemon.data_dir / "wiki" / rel
    wait_until(lambda: f"session summary by stub-model: {rel}" in git(wiki, "log", "--format=%s"))
    summarized, calls = page.read_text(), len(stub.model.calls("consolidation"))
    history = git(wiki, "log", "--format=%H", "--", rel)
    for _ in range(10):
        status, body, _ = openai_daemon.request("POST", "/v1/sessions/oa-again/finalize")
        assert status == 200 and body["page"] == rel, body
    # a session ended after them: its job runs after any job those finalizes would have queued
    drive_session(openai_daemon, claude_fixtures, "oa-after")
    after = wait_for_state(openai_daemon, "oa-after", "done")
    wait_until(lambda: "session summary by stub-model: " + after["page_path"] in git(wiki, "log", "--format=%s"))
    assert len(stub.model.calls("consolidation")) == calls + 1  # oa-after's alone
    again = job(openai_daemon, "oa-again")
    assert again["attempts"] == done["attempts"] == 1 and again["updated_at"] == done["updated_at"]
    assert page.read_text() == summarized  # neither the rules' page written back nor a second summary
    assert git(wiki, "log", "--format=%H", "--", rel) == history  # no commit


def test_a_session_compiled_again_with_new_content_keeps_its_attempts(openai_daemon: Daemon,
                                                                      claude_fixtures) -> None:
    drive_session(openai_daemon, claude_fixtures, "oa-more")
    assert wait_for_state(openai_daemon, "oa-more", "done")["attempts"] == 1
    assert openai_daemon.post_hook({"session_id": "oa-more", "cwd": "/home/dev/acme-api",
                                    "hook_event_name": "UserPromptSubmit", "prompt": "One more thing: the cache."})[0] == 202
    assert openai_daemon.request("POST", "/v1/sessions/oa-more/finalize")[0] == 200
    # queued again for the new bytes: a second lease, counted on top of the first (never reset)
    wait_until(lambda: (job(openai_daemon, "oa-more") or {}).get("attempts") == 2
               and job(openai_daemon, "oa-more")["state"] == "done")
    assert job(openai_daemon, "oa-more")["model_calls"] == 2


def test_anthropic_messages_with_the_key_from_an_environment_variable(
        data_dir: Path, stub: StubServer, claude_fixtures) -> None:
    daemon = start_daemon(data_dir, llm_config(stub, "anthropic", api_key_env="STUB_ANTHROPIC_KEY"),
                          env={"STUB_ANTHROPIC_KEY": "sk-ant-stub"})
    try:
        rel = drive_session(daemon, claude_fixtures, "an-1")
        assert wait_for_state(daemon, "an-1", "done")["attempts"] == 1
        call = [c for c in stub.model.calls("consolidation") if c.path == "/v1/messages"][-1]
        assert call.headers["x-api-key"] == "sk-ant-stub" and call.headers["anthropic-version"] == "2023-06-01"
        assert call.body["system"].startswith("You consolidate") and call.body["messages"][0]["role"] == "user"
        assert "Authorization" not in call.headers
        assert frontmatter(daemon.data_dir / "wiki" / rel)["generated"]["by"] == "stub-model"
        assert [c.path for c in stub.model.calls("models")][-1] == "/v1/models"
    finally:
        daemon.stop()


def test_provider_off_changes_nothing(daemon: Daemon, claude_fixtures) -> None:
    rel = drive_session(daemon, claude_fixtures, "off-1")
    assert job(daemon, "off-1") is None
    assert "generated" not in frontmatter(daemon.data_dir / "wiki" / rel)
    assert daemon.request("GET", "/status")[1]["llm"] == {"enabled": False}
    with db(daemon) as conn:
        assert conn.execute("SELECT count(*) FROM llm_jobs").fetchone()[0] == 0


def test_a_reindex_keeps_the_queue(openai_daemon: Daemon, claude_fixtures) -> None:
    drive_session(openai_daemon, claude_fixtures, "oa-reindex")
    wait_for_state(openai_daemon, "oa-reindex", "done")
    with db(openai_daemon) as conn:
        before = conn.execute("SELECT session_id, state, attempts FROM llm_jobs ORDER BY id").fetchall()
    assert before
    status, body, _ = openai_daemon.request("POST", "/v1/reindex", {}, timeout=120)
    assert status == 200, body
    with db(openai_daemon) as conn:
        assert conn.execute("SELECT session_id, state, attempts FROM llm_jobs ORDER BY id").fetchall() == before
