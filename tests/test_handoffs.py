"""Claim-once handoffs: path-boundary matching, concurrency, and delivery through SessionStart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ai_memory.core.paths import covers
from conftest import Daemon, cli_env
from wiki_helpers import wait_until


@pytest.mark.parametrize("parent, child, expected", [
    ("/repo", "/repo", True), ("/repo/", "/repo", True), ("/repo", "/repo/", True),
    ("/repo", "/repo/api", True), ("/repo/", "/repo/api/", True), ("/repo", "/repo-other", False),
    ("/repo/api", "/repo", False), ("/", "/anything", True), ("/repo", "/repository/api", False),
])
def test_path_boundary_table(parent: str, child: str, expected: bool) -> None:
    assert covers(parent, child) is expected


def end_session(daemon: Daemon, session_id: str, cwd: str, agent: str = "claude") -> None:
    base = {"session_id": session_id, "cwd": cwd}
    daemon.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Finish the rate limiter"}, agent=agent)
    daemon.post_hook({**base, "hook_event_name": "Stop",
                      "last_assistant_message": "Limiter half done. Next steps:\n- wire it into app/api.py"}, agent=agent)
    daemon.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"}, agent=agent)
    wait_until(lambda: daemon.request("GET", "/status")[1]["wiki"]["sessions_compiled"] >= 1, timeout=10)


def accept(daemon: Daemon, cwd: str, session_id: str) -> dict | None:
    status, body, _ = daemon.request("POST", "/v1/handoffs/accept", {"cwd": cwd, "agent": "codex", "session_id": session_id})
    assert status == 200, body
    return body["handoff"]


def test_twenty_concurrent_accepts_have_exactly_one_winner(daemon: Daemon, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "api").mkdir(parents=True)
    end_session(daemon, "claude-1", str(repo))
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda i: accept(daemon, str(repo / "api"), f"codex-{i}"), range(20)))
    winners = [r for r in results if r]
    assert len(winners) == 1 and winners[0]["session_id"] == "claude-1"
    assert winners[0]["state"] == "accepted"


def test_sibling_directory_and_symlinks(daemon: Daemon, tmp_path: Path) -> None:
    repo, other = tmp_path / "repo", tmp_path / "repo-other"
    repo.mkdir()
    other.mkdir()
    link = tmp_path / "link-to-repo"
    os.symlink(repo, link)
    end_session(daemon, "claude-2", str(repo))
    assert accept(daemon, str(other), "x-1") is None
    assert accept(daemon, str(link) + "/", "x-2")["session_id"] == "claude-2"


def test_session_start_through_the_real_client_gets_the_handoff_once(daemon: Daemon, tmp_path: Path) -> None:
    api = tmp_path / "repo" / "api"
    api.mkdir(parents=True)
    end_session(daemon, "claude-3", str(api))
    env = cli_env(daemon.data_dir, AI_MEMORY_PORT=str(daemon.port))
    client = [str(Path(__file__).resolve().parent.parent / "hooks" / "ai-memory-hook"), "codex", "SessionStart"]

    def start(session_id: str) -> str:
        payload = {"session_id": session_id, "hook_event_name": "SessionStart", "cwd": str(api), "source": "startup"}
        done = subprocess.run(client, input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=30)
        assert done.returncode == 0
        return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout.strip() else ""

    first = start("codex-1")
    assert "Handoff from claude" in first and "wire it into app/api.py" in first and len(first) <= 8000
    assert "Handoff from" not in start("codex-2")
