"""The consolidation queue under failure: timeouts, a crash mid-job, a provider that fails its
check, a bad [llm] setting. None of them stops the daemon or a hook."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import Daemon, run_cli
from llm_helpers import (
    PROPOSAL, drive_session, frontmatter, generated_pages, job, llm_config, start_daemon, wait_for_state,
)
from llm_stub import HANG, StubServer
from wiki_helpers import wait_until


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    server.model.default_consolidation = lambda prompt: PROPOSAL
    yield server
    server.close()


def test_a_timeout_is_a_failed_attempt_retried_with_backoff(data_dir: Path, stub: StubServer,
                                                            claude_fixtures) -> None:
    stub.model.models_status = 401  # the start-up check fails: a status line, the daemon serves
    stub.model.consolidation.append(HANG)
    daemon = start_daemon(data_dir, llm_config(stub, timeout_s=0.5, backoff_s=0.2))
    try:
        wait_until(lambda: daemon.request("GET", "/status")[1]["llm"]["check"] != "not checked yet")
        check = daemon.request("GET", "/status")[1]["llm"]["check"]
        assert check.startswith("failed: the LLM provider answered 401") and "bad key" in check
        drive_session(daemon, claude_fixtures, "slow-1")
        done = wait_for_state(daemon, "slow-1", "done")
        assert done["attempts"] == 2 and done["last_error"] is None
        assert len(stub.model.calls("consolidation")) == 2
        shown = run_cli(data_dir, "status", "--url", daemon.url)  # what a person reads
        line = next(line for line in shown.stdout.splitlines() if line.startswith("llm:"))
        assert "openai stub-model (failed: the LLM provider answered 401" in line
        assert "0 pending, 0 running, 1 done, 0 failed" in line
    finally:
        daemon.stop()


def test_a_crash_mid_job_is_recovered_by_the_lease_and_completes_once(
        data_dir: Path, stub: StubServer, claude_fixtures) -> None:
    stub.model.consolidation.append(HANG)
    config = llm_config(stub, lease_s=1.0, timeout_s=30.0)
    daemon = start_daemon(data_dir, config)
    rel = drive_session(daemon, claude_fixtures, "crash-1")
    running = wait_for_state(daemon, "crash-1", "running")
    wait_until(lambda: stub.model.calls("consolidation"))  # the model holds the request
    daemon.stop(signal.SIGKILL)
    assert running["attempts"] == 1 and running["lease_token"]
    again = Daemon(data_dir, port=daemon.port).start()
    try:
        done = wait_for_state(again, "crash-1", "done")
        assert done["attempts"] == 2 and json.loads(done["outcome"])["stored"] == 2
        mine = [p for p in generated_pages(again) if frontmatter(p).get("source") == f"[[{rel[:-3]}]]"]
        assert len(mine) == 2  # once: nothing from the attempt the crash cut short
        assert frontmatter(again.data_dir / "wiki" / rel)["generated"]["by"] == "stub-model"
    finally:
        stub.model.release()
        again.stop()


def test_a_bad_llm_setting_leaves_it_off_with_the_reason_in_status(data_dir: Path, claude_fixtures) -> None:
    daemon = start_daemon(data_dir, '[llm]\nprovider = "openai"\nmodel = "m"\napi_key_file = "missing.key"\n')
    try:
        llm = daemon.request("GET", "/status")[1]["llm"]
        assert llm["enabled"] is False and llm["problem"].startswith("cannot read llm.api_key_file")
        rel = drive_session(daemon, claude_fixtures, "bad-1")  # hooks and session pages as ever
        assert "generated" not in frontmatter(daemon.data_dir / "wiki" / rel)
    finally:
        daemon.stop()



def test_the_session_cap_ends_the_job_capped_with_its_reason_and_no_retry_loop(data_dir: Path, stub: StubServer,
                                                                               claude_fixtures) -> None:
    stub.model.default_consolidation = lambda prompt: "Sure, here is a summary."  # never JSON: every try fails
    daemon = start_daemon(data_dir, llm_config(stub, max_attempts=4, max_calls_per_session=2))
    try:
        drive_session(daemon, claude_fixtures, "cap-1")
        capped = wait_for_state(daemon, "cap-1", "capped")
        assert capped["model_calls"] == 2 and "llm.max_calls_per_session" in capped["last_error"]
        assert len(stub.model.calls("consolidation")) == 2
        queue = daemon.request("GET", "/status")[1]["llm"]["queue"]
        assert queue["capped"] == 1 and "llm.max_calls_per_session" in queue["last_error"]
        line = next(x for x in run_cli(data_dir, "status", "--url", daemon.url).stdout.splitlines()
                    if x.startswith("llm:"))
        assert "1 capped" in line and "llm.max_calls_per_session" in line
        # new content queues the job again: the cap refuses it at once, without a call
        daemon.post_hook({"session_id": "cap-1", "cwd": "/home/dev/acme-api", "hook_event_name": "UserPromptSubmit",
                          "prompt": "And the retry policy?"})
        assert daemon.request("POST", "/v1/sessions/cap-1/finalize")[0] == 200
        wait_until(lambda: job(daemon, "cap-1")["attempts"] == capped["attempts"] + 1)
        assert wait_for_state(daemon, "cap-1", "capped")["model_calls"] == 2
        assert len(stub.model.calls("consolidation")) == 2
    finally:
        daemon.stop()


def test_the_daily_cap_defers_jobs_to_the_next_utc_day_and_its_count_survives_restart_and_reindex(
        data_dir: Path, stub: StubServer, claude_fixtures) -> None:
    daemon = start_daemon(data_dir, llm_config(stub, max_calls_per_day=1))
    try:
        drive_session(daemon, claude_fixtures, "day-1")
        wait_for_state(daemon, "day-1", "done")
        drive_session(daemon, claude_fixtures, "day-2")
        wait_until(lambda: "llm.max_calls_per_day" in (job(daemon, "day-2")["last_error"] or ""))
        waiting = job(daemon, "day-2")
        tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).strftime("%Y-%m-%dT00:00:00.000000Z")
        assert waiting["state"] == "pending" and waiting["not_before"] == tomorrow and waiting["attempts"] == 0
        assert len(stub.model.calls("consolidation")) == 1
        llm = daemon.request("GET", "/status")[1]["llm"]
        assert (llm["calls_today"], llm["max_calls_per_day"]) == (1, 1)
        line = next(x for x in run_cli(data_dir, "status", "--url", daemon.url).stdout.splitlines()
                    if x.startswith("llm:"))
        assert "model calls today: 1 of 1" in line
    finally:
        daemon.stop()
    again = Daemon(data_dir, port=daemon.port).start()
    try:
        assert again.request("GET", "/status")[1]["llm"]["calls_today"] == 1  # counted in the store
        status, body, _ = again.request("POST", "/v1/reindex", {}, timeout=120)
        assert status == 200, body
        assert again.request("GET", "/status")[1]["llm"]["calls_today"] == 1  # and in the journal
        assert job(again, "day-2")["state"] == "pending" and len(stub.model.calls("consolidation")) == 1
    finally:
        again.stop()
