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


def briefing(daemon: Daemon, session_id: str, cwd: str) -> dict:
    status, body, _ = daemon.request("POST", "/v1/briefing", {"session_id": session_id, "cwd": cwd})
    assert status == 200, body
    return body


def test_agents_ending_in_parallel_each_hand_over(daemon: Daemon, tmp_path: Path) -> None:
    """Codex and Gemini end a second apart in one repository: the next session receives both
    handoffs, newest first; a claim of one never expires the other."""
    repo = tmp_path / "repo"
    repo.mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda a: end_session(daemon, f"{a}-par", str(repo), agent=a), ("codex", "gemini")))
    wait_until(lambda: len(daemon.request("GET", "/v1/handoffs?state=open")[1]["handoffs"]) >= 2, timeout=10)
    got = briefing(daemon, "next-1", str(repo))
    assert {h["session_id"] for h in got["handoffs"]} == {"codex-par", "gemini-par"}
    assert got["handoff"] == got["handoffs"][0]
    assert got["handoffs"][0]["created_at"] >= got["handoffs"][1]["created_at"]
    assert "Handoff from codex" in got["text"] and "Handoff from gemini" in got["text"]
    assert briefing(daemon, "next-2", str(repo))["handoffs"] == []

    for agent in ("codex", "gemini"):
        end_session(daemon, f"{agent}-one", str(repo), agent=agent)
    wait_until(lambda: len(daemon.request("GET", "/v1/handoffs?state=open")[1]["handoffs"]) == 2, timeout=10)
    taken = accept(daemon, str(repo), "taker")["session_id"]
    status, listed, _ = daemon.request("GET", "/v1/handoffs?state=open")
    other = {"codex-one", "gemini-one"} - {taken}
    assert {h["session_id"] for h in listed["handoffs"]} == other  # still open, not expired
    assert {accept(daemon, str(repo), "taker-2")["session_id"]} == other


def test_what_does_not_fit_the_briefing_stays_open(daemon: Daemon, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    ids = [begin(daemon, cwd=str(repo), summary=f"Step {i} of the migration", next_steps=["x" * 300] * 3)["id"]
           for i in range(5)]
    first = briefing(daemon, "b-1", str(repo))
    assert [h["id"] for h in first["handoffs"]] == ids[::-1][:len(first["handoffs"])]
    assert 1 <= len(first["handoffs"]) <= 3 and len(first["text"]) <= 8000
    left = {h["id"] for h in daemon.request("GET", "/v1/handoffs?state=open")[1]["handoffs"]}
    assert left == set(ids) - {h["id"] for h in first["handoffs"]}
    second = briefing(daemon, "b-2", str(repo))
    assert second["handoffs"] and {h["id"] for h in second["handoffs"]} <= left


def begin(daemon: Daemon, expect: int = 201, **body) -> dict:
    status, answer, _ = daemon.request("POST", "/v1/handoffs", body)
    assert status == expect, answer
    return answer.get("handoff", answer)


def test_manual_beats_auto_and_shows_in_the_list(daemon: Daemon, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    end_session(daemon, "claude-4", str(repo))
    manual = begin(daemon, cwd=str(repo), summary="Paused the migration halfway", next_steps=["run step 3"],
                   from_agent="claude", model="opus")
    assert manual["kind"] == "manual" and manual["state"] == "open" and manual["owner"] == "local"
    status, listed, _ = daemon.request("GET", f"/v1/handoffs?state=open")
    assert [h["id"] for h in listed["handoffs"]][0] == manual["id"] and len(listed["handoffs"]) == 2
    assert accept(daemon, str(repo), "x-1")["id"] == manual["id"]
    assert accept(daemon, str(repo), "x-2")["session_id"] == "claude-4"  # then the automatic one
    assert accept(daemon, str(repo), "x-3") is None
    status, listed, _ = daemon.request("GET", "/v1/handoffs?state=accepted")
    assert {h["accepted_by_session"] for h in listed["handoffs"]} == {"x-1", "x-2"}


def test_owner_isolation_versus_shared(daemon: Daemon, tmp_path: Path) -> None:
    repo = str(tmp_path)
    private = begin(daemon, cwd=repo, summary="alice only", owner="alice")
    shared = begin(daemon, cwd=repo, summary="for the team", owner="alice", shared=True)

    def take(owner: str, session: str) -> dict | None:
        status, body, _ = daemon.request("POST", "/v1/handoffs/accept",
                                         {"cwd": repo, "session_id": session, "owner": owner})
        assert status == 200
        return body["handoff"]

    assert take("bob", "b-1")["id"] == shared["id"]
    assert take("bob", "b-2") is None  # alice's private one stays hers
    assert take("alice", "a-1")["id"] == private["id"]
    status, seen, _ = daemon.request("GET", "/v1/handoffs?owner=bob")
    assert [h["id"] for h in seen["handoffs"]] == [shared["id"]]


def test_to_agent_and_project_only_handoffs(daemon: Daemon, tmp_path: Path) -> None:
    (tmp_path / "web").mkdir()
    begin(daemon, project="web", summary="For Gemini only", to_agent="gemini")
    status, none, _ = daemon.request("POST", "/v1/handoffs/accept",
                                     {"cwd": str(tmp_path / "web"), "agent": "codex", "session_id": "c-1"})
    assert none["handoff"] is None
    status, got, _ = daemon.request("POST", "/v1/handoffs/accept",
                                    {"cwd": str(tmp_path / "web"), "agent": "gemini", "session_id": "g-1"})
    assert got["handoff"]["summary"] == "For Gemini only"


def test_cancel_and_bad_input(daemon: Daemon, tmp_path: Path) -> None:
    handoff = begin(daemon, cwd=str(tmp_path), summary="Try the new cache")
    status, body, _ = daemon.request("POST", f"/v1/handoffs/{handoff['id']}/cancel")
    assert status == 200 and body["handoff"]["state"] == "cancelled"
    assert accept(daemon, str(tmp_path), "x-1") is None
    assert daemon.request("POST", "/v1/handoffs/nope/cancel")[0] == 404
    taken = begin(daemon, cwd=str(tmp_path), summary="Another")
    accept(daemon, str(tmp_path), "x-2")
    status, body, _ = daemon.request("POST", f"/v1/handoffs/{taken['id']}/cancel")
    assert status == 409 and "accepted" in body["error"]
    assert begin(daemon, 400, cwd=str(tmp_path))["error"] == "missing summary"
    assert begin(daemon, 400, summary="x")["error"] == "missing project"
    assert begin(daemon, 400, summary="x", project="p", next_steps="a b".split(" ") + [3])["error"].startswith("next_steps")
    assert daemon.request("GET", "/v1/handoffs?state=maybe")[0] == 400


def test_handoff_text_is_sanitized(daemon: Daemon, tmp_path: Path) -> None:
    handoff = begin(daemon, cwd=str(tmp_path), summary="Use token ghp_abcdefghijklmnopqrstuvwxyz0123456789 for CI")
    assert "ghp_" not in handoff["summary"] and "[REDACTED:" in handoff["summary"]
