"""The consolidation queue under failure: timeouts, a crash mid-job, a provider that fails its
check, a bad [llm] setting. None of them stops the daemon or a hook."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Daemon, run_cli
from llm_helpers import (
    PROPOSAL, drive_session, frontmatter, generated_pages, llm_config, start_daemon, wait_for_state,
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

