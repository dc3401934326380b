"""Session end: observations become a session page in git, with its index rows and a handoff."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path

import yaml

from conftest import Daemon, run_cli
from wiki_helpers import git, search_paths, wait_until

SESSION = "5f0c2a9e-7d3b-4e1a-9b2c-1f4e8d6a3c10"


def drive_session(daemon: Daemon, fixtures: dict, session_id: str = SESSION, cwd: str = "/home/dev/acme-api") -> None:
    order = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
             "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"]
    seen: dict[str, int] = {}
    for name in order:
        i = seen.get(name, 0)
        seen[name] = i + 1
        payload = copy.deepcopy(fixtures[name][i % len(fixtures[name])])
        payload["session_id"], payload["cwd"] = session_id, cwd
        status, _ = daemon.post_hook(payload)
        assert status == 202


def test_session_end_writes_page_commit_and_handoff(daemon: Daemon, claude_fixtures) -> None:
    drive_session(daemon, claude_fixtures)
    db = daemon.data_dir / "db" / "memory.sqlite"

    def page_path() -> str | None:
        row = sqlite3.connect(db).execute("SELECT page_path FROM sessions WHERE id = ?", (SESSION,)).fetchone()
        return row[0] if row else None

    wait_until(page_path, timeout=10)
    rel = page_path()
    assert rel.startswith("acme-api/sessions/") and rel.endswith(f"-{SESSION[:8]}.md")
    text = (daemon.data_dir / "wiki" / rel).read_text()
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["type"] == "Session Summary" and meta["session_id"] == SESSION and meta["tier"] == "episodic"
    for section in ("## Summary", "## Prompts", "## Files touched", "## Commands run",
                    "## Errors and failures", "## Open questions", "## Next steps"):
        assert section in text
    prompts = [p["prompt"] for p in claude_fixtures["UserPromptSubmit"][:2]]
    assert all(p.splitlines()[0][:40] in text for p in prompts)
    assert claude_fixtures["PostToolUse"][0]["tool_input"].get("file_path", "") in text or "Bash" in text
    wait_until(lambda: rel in git(daemon.data_dir / "wiki", "log", "--name-only", "--format=%s"), timeout=10)
    assert "ai-memory <ai-memory@localhost>" in git(daemon.data_dir / "wiki", "log", "-1", "--format=%an <%ae>")
    handoff = sqlite3.connect(db).execute(
        "SELECT project, cwd, from_agent, state, page_path FROM handoffs WHERE session_id = ?", (SESSION,)).fetchone()
    assert handoff == ("acme-api", "/home/dev/acme-api", "claude", "open", rel)
    assert rel in search_paths(daemon, prompts[0].split()[0] + " " + prompts[0].split()[-1])


def test_finalize_session_cli_and_empty_sessions(daemon: Daemon, claude_fixtures) -> None:
    payload = copy.deepcopy(claude_fixtures["UserPromptSubmit"][0])
    payload["session_id"] = "codex-like"
    daemon.post_hook(payload, agent="codex")
    done = run_cli(daemon.data_dir, "finalize-session", "--session", "codex-like", "--url", daemon.url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("-codex-li.md")
    daemon.post_hook({"session_id": "empty", "hook_event_name": "SessionStart", "cwd": "/x"})
    daemon.post_hook({"session_id": "empty", "hook_event_name": "SessionEnd", "cwd": "/x"})
    empty = run_cli(daemon.data_dir, "finalize-session", "--session", "empty", "--url", daemon.url)
    assert empty.returncode == 0 and "nothing to compile" in empty.stdout
    missing = run_cli(daemon.data_dir, "finalize-session", "--session", "nope", "--url", daemon.url)
    assert missing.returncode == 1 and "no session nope" in missing.stderr


def test_stop_then_idle_compiles_sessions_without_session_end(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text(
        "[sessions]\nidle_minutes = 0.005\n[wiki]\nreconcile_interval_s = 0.3\n")
    daemon = Daemon(data_dir).start()
    try:
        daemon.post_hook({"session_id": "cx1", "hook_event_name": "UserPromptSubmit", "prompt": "Fix the flaky login test",
                          "cwd": "/home/dev/acme-api"}, agent="codex")
        daemon.post_hook({"session_id": "cx1", "hook_event_name": "Stop", "cwd": "/home/dev/acme-api",
                          "last_assistant_message": "Fixed. Next: add a regression test?"}, agent="codex")
        db = data_dir / "db" / "memory.sqlite"
        wait_until(lambda: sqlite3.connect(db).execute(
            "SELECT page_path FROM sessions WHERE id = 'cx1'").fetchone()[0], timeout=10)
    finally:
        daemon.stop()


def test_sessions_whose_ids_share_their_start_keep_a_page_each(daemon: Daemon, claude_fixtures) -> None:
    """Time-ordered ids (Codex's UUIDv7) begin alike for a minute, and a page is named by the
    first 8 characters: the second session of that minute must not replace the first's page."""
    first, second = "019a2316-96e7-7c43-a8ff-93b71d848fde", "019a2316-b0f1-7a02-9c3e-0a4b5c6d7e8f"
    db = daemon.data_dir / "db" / "memory.sqlite"

    def page_of(session_id: str) -> str | None:
        row = sqlite3.connect(db).execute("SELECT page_path FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row[0] if row else None

    for session_id in (first, second):
        drive_session(daemon, claude_fixtures, session_id=session_id, cwd="/home/dev/billing")
        wait_until(lambda: page_of(session_id), timeout=10)
    assert page_of(first) != page_of(second)
    for session_id in (first, second):
        meta = yaml.safe_load((daemon.data_dir / "wiki" / page_of(session_id)).read_text().split("---\n")[1])
        assert meta["session_id"] == session_id
    status, body = daemon.post_hook({**claude_fixtures["SessionEnd"][0], "session_id": first, "cwd": "/home/dev/billing"})
    assert status == 202  # compiled again (a resumed session): the same page, not a third one
    assert page_of(first).endswith(f"-{first[:8]}.md")
