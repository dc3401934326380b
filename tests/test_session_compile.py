"""A session's observations become a session page and a handoff, by rules.

Sessions are built the way the store builds them: real hook payloads (the shared Claude Code
fixtures, and Codex- and Gemini-shaped ones written here) through ``build_observation``.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.core.observation import build_observation
from ai_memory.core.session_compile import MAX_PAGE_BYTES, compile_session

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures" / "claude-code-hooks.json"
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=timezone.utc)
FRONTMATTER_KEYS = ["type", "title", "tier", "project", "created", "updated", "session_id", "agent", "cwd",
                    "tags", "entities", "summary", "files_touched"]
SECTIONS = ["Summary", "Prompts", "Files touched", "Commands run", "Errors and failures", "Open questions",
            "Next steps"]
LAST_REPLY = (
    "Raised TOKEN_TTL to 15 minutes and recorded it in ADR 7; the login tests pass.\n\n"
    "Should the refresh token TTL change too?\n\n"
    "Next steps:\n"
    "1. Update app/session.py to read TOKEN_TTL instead of its own constant.\n"
    "2. Rerun the full suite on CI.\n\n"
    "- [ ] Write a handoff for Codex\n"
    "- [x] Write ADR 7\n"
)


def observations(payloads: list[dict[str, Any]], agent: str, start: datetime = T0) -> list[dict[str, Any]]:
    """Observation rows as the store keeps them, one minute apart unless a payload has a timestamp."""
    rows = []
    for i, payload in enumerate(payloads):
        obs = build_observation(copy.deepcopy(payload), agent=agent, event_hint=None,
                                received_at=start + timedelta(minutes=i))
        rows.append(obs.to_record())
    return rows


def section(text: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section {heading!r}"
    return match.group(1).strip()


@pytest.fixture(scope="module")
def claude() -> dict[str, list[dict[str, Any]]]:
    if not FIXTURES.exists():
        pytest.skip(f"shared fixtures not found at {FIXTURES} (they live beside the repo in ../shared)")
    return json.loads(FIXTURES.read_text())


@pytest.fixture(scope="module")
def claude_rows(claude) -> list[dict[str, Any]]:
    write = copy.deepcopy(claude["PostToolUse"][0])  # Write docs/adr/0007-token-ttl.md
    write["tool_input"]["content"] = "# ADR 7: token TTL 15 min\n<!-- TODO: link the incident report -->\n"
    stop = copy.deepcopy(claude["Stop"][0])
    stop["last_assistant_message"] = LAST_REPLY
    return observations([
        claude["SessionStart"][0],
        claude["UserPromptSubmit"][0],  # Why does the login test fail on CI but not locally?
        claude["PreToolUse"][0],  # Bash pytest tests/test_login.py (no Post: still counted once)
        claude["PostToolUseFailure"][0],  # Bash npm test: Exit code 1
        claude["PreToolUse"][1],  # Edit app/auth.py ...
        {**claude["PreToolUse"][1], "hook_event_name": "PostToolUse", "tool_response": {"filePath": "x"}},
        claude["PostToolBatch"][0],  # Read app/auth.py, Grep
        claude["UserPromptSubmit"][1],  # Continue from the handoff note ...
        write,
        claude["PostToolUse"][1],  # Bash git log
        claude["PostToolBatch"][1],  # Bash pytest (Exit code 0), Edit app/session.py
        claude["PostToolUseFailure"][1],  # MCP write_note failed
        stop,
        claude["SessionEnd"][0],
    ], agent="claude-code")


@pytest.fixture(scope="module")
def claude_page(claude_rows):
    page = compile_session(claude_rows)
    assert page is not None
    return page


def test_prompts_are_listed_in_order_with_their_time(claude_page) -> None:
    prompts = section(claude_page.text, "Prompts").splitlines()
    assert prompts == [
        "- 10:01 Why does the login test fail on CI but not locally?",
        "- 10:07 Continue from the handoff note and finish the rate limiter.",
    ]


def test_files_touched_say_what_was_done_relative_to_cwd(claude_page) -> None:
    files = section(claude_page.text, "Files touched").splitlines()
    assert files == [
        "- `app/auth.py`: edited, read",
        "- `docs/adr/0007-token-ttl.md`: written",
        "- `app/session.py`: edited",
    ]
    assert claude_page.frontmatter["files_touched"] == ["app/auth.py", "docs/adr/0007-token-ttl.md", "app/session.py"]


def test_commands_show_their_exit_status_and_mark_failures(claude_page) -> None:
    commands = section(claude_page.text, "Commands run")
    assert "`npm test`: **failed** (exit 1)" in commands
    assert "`pytest -q tests/test_login.py`: exit 0" in commands
    assert "`git log --oneline -3`" in commands
    assert commands.count("pytest tests/test_login.py -x -q") == 1


def test_errors_hold_the_failure_text(claude_page) -> None:
    errors = section(claude_page.text, "Errors and failures")
    assert "Bash `npm test`: Exit code 1; Error: Cannot find module 'express'" in errors
    assert "mcp__memory__write_note: MCP error -32603: daemon not reachable" in errors


def test_summary_counts_prompts_calls_failures_and_duration(claude_page) -> None:
    summary = section(claude_page.text, "Summary")
    # 1 Bash pre-only + npm test + Edit (pre and post merged) + Read + Grep + Write + git log
    # + batch Bash + batch Edit + MCP write_note = 10 calls, 2 failed
    assert "- Prompts: 2 · Tool calls: 10 · Failures: 2" in summary
    assert "- When: 2026-11-30 10:00 → 10:13 UTC (13 min)" in summary
    assert "- Agent: claude-code" in summary
    assert "- First prompt: Why does the login test fail on CI but not locally?" in summary
    assert "- Last prompt: Continue from the handoff note and finish the rate limiter." in summary


def test_open_questions_come_from_the_last_reply(claude_page) -> None:
    assert section(claude_page.text, "Open questions") == "- Should the refresh token TTL change too?"


def test_next_steps_come_from_the_last_reply_and_todos_in_written_files(claude_page) -> None:
    assert section(claude_page.text, "Next steps").splitlines() == [
        "- Update app/session.py to read TOKEN_TTL instead of its own constant.",
        "- Rerun the full suite on CI.",
        "- Write a handoff for Codex",
        "- docs/adr/0007-token-ttl.md: TODO: link the incident report",
    ]


def test_frontmatter_parses_back_with_keys_in_order(claude_page) -> None:
    match = re.match(r"\A---\n(.*?)\n---\n\n# ([^\n]+)\n", claude_page.text, re.S)
    assert match
    meta = yaml.safe_load(match.group(1))
    assert list(meta) == FRONTMATTER_KEYS
    assert meta == claude_page.frontmatter
    assert meta["type"] == "Session Summary" and meta["tier"] == "episodic"
    assert meta["title"] == match.group(2) == "Why does the login test fail on CI but not locally?"
    assert meta["created"] == "2026-11-30T10:00:00.000000Z" and meta["updated"] == "2026-11-30T10:13:00.000000Z"
    assert meta["session_id"] == "5f0c2a9e-7d3b-4e1a-9b2c-1f4e8d6a3c10"
    assert meta["agent"] == "claude-code" and meta["tags"] == ["session", "claude-code"]
    assert meta["cwd"] == "/home/dev/acme-api" and meta["project"] == "_unsorted"
    assert "TOKEN_TTL" in meta["entities"] and "app/auth.py" in meta["entities"]
    assert meta["summary"].startswith("Why does the login test fail on CI but not locally? Raised TOKEN_TTL")
    assert len(meta["summary"]) <= 300


def test_sections_come_in_order_and_empty_ones_say_none(claude, claude_page) -> None:
    assert re.findall(r"^## (.+)$", claude_page.text, re.M) == SECTIONS
    bare = compile_session(observations([claude["UserPromptSubmit"][2]], agent="claude-code"))
    for heading in ("Files touched", "Commands run", "Errors and failures", "Next steps"):
        assert section(bare.text, heading) == "_None._"
    assert section(bare.text, "Open questions") == (
        "- No reply recorded to the last prompt: /review the migration in db/0042_add_index.sql")


def test_path_uses_project_date_and_short_id(claude_rows) -> None:
    assert compile_session(claude_rows).path == "_unsorted/sessions/2026-11-30-5f0c2a9e.md"
    rows = [{**row, "project": "acme-api"} for row in claude_rows]
    assert compile_session(rows).path == "acme-api/sessions/2026-11-30-5f0c2a9e.md"
    page = compile_session(rows, project="../Evil Project!")
    assert page.path == "evil-project/sessions/2026-11-30-5f0c2a9e.md"
    assert page.frontmatter["project"] == page.handoff["project"] == "evil-project"


def test_handoff_carries_what_the_next_agent_needs(claude_page) -> None:
    handoff = claude_page.handoff
    assert set(handoff) == {"session_id", "project", "cwd", "from_agent", "summary", "open_questions",
                            "files_touched", "next_steps", "created_at"}
    assert handoff["session_id"] == "5f0c2a9e-7d3b-4e1a-9b2c-1f4e8d6a3c10"
    assert handoff["from_agent"] == "claude-code" and handoff["cwd"] == "/home/dev/acme-api"
    assert handoff["summary"] == claude_page.frontmatter["summary"]
    assert handoff["open_questions"] == ["Should the refresh token TTL change too?"]
    assert handoff["files_touched"] == claude_page.frontmatter["files_touched"]
    assert handoff["next_steps"][0].startswith("Update app/session.py")
    assert handoff["created_at"] == "2026-11-30T10:13:00.000000Z"
    assert claude_page.entities == claude_page.frontmatter["entities"]


def test_a_prompt_without_a_reply_is_an_open_question(claude) -> None:
    rows = observations([claude["UserPromptSubmit"][0], claude["Stop"][0], claude["UserPromptSubmit"][1]],
                        agent="claude-code")
    page = compile_session(rows)
    assert page.handoff["open_questions"] == [
        "No reply recorded to the last prompt: Continue from the handoff note and finish the rate limiter."]
    asked = compile_session(observations([claude["UserPromptSubmit"][0]], agent="claude-code"))
    assert asked.handoff["open_questions"] == ["Why does the login test fail on CI but not locally?"]


def test_lifecycle_only_session_has_no_page(claude) -> None:
    rows = observations([claude["SessionStart"][0], claude["Notification"][1], claude["SessionEnd"][0]],
                        agent="claude-code")
    assert compile_session(rows) is None
    assert compile_session([]) is None


def test_same_observations_give_identical_bytes(claude_rows) -> None:
    first = compile_session(claude_rows)
    again = compile_session(copy.deepcopy(claude_rows))
    assert first.text.encode() == again.text.encode()
    assert first.handoff == again.handoff


def test_bytes_do_not_depend_on_the_hash_seed(claude_rows, tmp_path) -> None:
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps(claude_rows))
    script = ("import json, sys; from ai_memory.core.session_compile import compile_session; "
              "sys.stdout.write(compile_session(json.load(open(sys.argv[1]))).text)")
    texts = {
        subprocess.run([sys.executable, "-c", script, str(rows)], capture_output=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}, cwd=Path(__file__).parents[1]).stdout
        for seed in ("1", "2")
    }
    assert texts == {compile_session(claude_rows).text.encode()}


def test_title_skips_wrappers_and_survives_yaml(claude) -> None:
    hostile = "- [ ] *fix*: key: value # not a comment \u2028 'single' \"double\" & ✓ " + "word " * 30
    rows = observations([{**claude["UserPromptSubmit"][0], "prompt": "<command-message>init</command-message>"},
                         {**claude["UserPromptSubmit"][0], "prompt": hostile + "\nsecond line"}], agent="claude-code")
    page = compile_session(rows)
    meta = yaml.safe_load(page.text.split("\n---\n")[0].removeprefix("---\n"))
    assert meta == page.frontmatter
    assert meta["title"].startswith("- [ ] *fix*: key: value # not a comment") and len(meta["title"]) <= 80
    assert "second line" not in meta["title"]


def test_long_paths_and_commands_still_fit(claude) -> None:
    batch = claude["PostToolBatch"][1]
    payloads = []
    for i in range(400):
        unique = {"file_path": f"/home/dev/acme-api/{'deep/' * 100}f{i}.py", "command": f"make {'x' * 400} {i}"}
        payloads.append({**batch, "tool_calls": [{**c, "tool_input": {**c["tool_input"], **unique}}
                                                 for c in batch["tool_calls"]]})
    page = compile_session(observations(payloads, agent="claude-code"))
    assert len(page.text.encode()) <= MAX_PAGE_BYTES
    assert len(page.frontmatter["files_touched"]) == 50
    assert all(len(p) <= 512 for p in page.handoff["files_touched"])


def test_tool_only_session_is_titled_by_its_id(claude) -> None:
    rows = observations([claude["PostToolUse"][1]], agent="claude-code")
    page = compile_session(rows)
    assert page.frontmatter["title"] == "Session 5f0c2a9e"
    assert page.text.count("\n# Session 5f0c2a9e\n") == 1


CODEX = {"session_id": "019873a2-5c1e-7d40-b1f2-3a4b5c6d7e8f", "transcript_path": None,
         "cwd": "/home/dev/acme-api", "model": "gpt-5.3-codex", "permission_mode": "default", "turn_id": "turn_0007"}
PATCH = ("*** Begin Patch\n*** Update File: app/session.py\n@@\n-TTL = 300\n+TTL = 900\n"
         "*** Add File: app/limits.py\n+LIMIT = 100  # TODO: make the limit configurable\n*** End Patch")


def codex_session() -> list[dict[str, Any]]:
    patch = {"tool_name": "apply_patch", "tool_use_id": "call_8KfQ2", "tool_input": {"command": PATCH}}
    bash = {"tool_name": "Bash", "tool_use_id": "call_9", "tool_input": {"command": "pytest -q tests/test_session.py"}}
    return observations([
        {**CODEX, "hook_event_name": "SessionStart", "source": "startup"},
        {**CODEX, "hook_event_name": "UserPromptSubmit",
         "prompt": "Pick up the handoff from Claude and finish app/session.py"},
        {**CODEX, "hook_event_name": "PreToolUse", **patch},
        {**CODEX, "hook_event_name": "PostToolUse", **patch,
         "tool_response": "Success. Updated the following files:\nM app/session.py\nA app/limits.py"},
        {**CODEX, "hook_event_name": "PreToolUse", **bash},
        {**CODEX, "hook_event_name": "PostToolUse", **bash,
         "tool_response": "Exit code: 1\nWall time: 2.1 seconds\nOutput:\nFAILED tests/test_session.py::test_ttl"},
        {**CODEX, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message":
         "session.py now uses the 15-minute TTL, but test_ttl still fails.\n\nRemaining:\n"
         "- fix the TTL assertion in tests/test_session.py\n- rerun CI\n\nDo you want me to update the fixture too?"},
    ], agent="codex")


def test_codex_apply_patch_and_failing_bash() -> None:
    page = compile_session(codex_session())
    assert page.frontmatter["agent"] == "codex"
    files = section(page.text, "Files touched").splitlines()
    assert files == ["- `app/session.py`: edited", "- `app/limits.py`: written"]
    assert "`pytest -q tests/test_session.py`: **failed** (exit 1)" in section(page.text, "Commands run")
    errors = section(page.text, "Errors and failures")
    assert "Bash `pytest -q tests/test_session.py`: exit 1; FAILED tests/test_session.py::test_ttl" in errors
    assert "Tool calls: 2 · Failures: 1" in section(page.text, "Summary")
    assert page.handoff["open_questions"] == ["Do you want me to update the fixture too?"]
    assert page.handoff["next_steps"] == ["fix the TTL assertion in tests/test_session.py", "rerun CI",
                                          "app/limits.py: TODO: make the limit configurable"]
    assert page.path == "_unsorted/sessions/2026-11-30-019873a2.md"


GEMINI = {"session_id": "c1f0e2d3-4b5a-4c6d-8e7f-9a0b1c2d3e4f", "cwd": "/home/dev/acme-api",
          "transcript_path": "/home/dev/.gemini/tmp/acme/chats/session-2026-08-21.json"}


def gemini(event: str, second: int, **fields: Any) -> dict[str, Any]:
    stamp = f"2026-08-21T09:{30 + second // 60:02d}:{second % 60:02d}Z"
    return {**GEMINI, "hook_event_name": event, "timestamp": stamp, **fields}


def gemini_session() -> list[dict[str, Any]]:
    shell = {"tool_name": "run_shell_command", "tool_input": {"command": "pytest -q"}}
    read = {"tool_name": "read_file", "tool_input": {"absolute_path": "/home/dev/acme-api/app/auth.py"}}
    replace = {"tool_name": "replace", "tool_input": {"file_path": "/home/dev/acme-api/app/auth.py",
               "old_string": "TOKEN_TTL = 300", "new_string": "TOKEN_TTL = 900  # FIXME: read from settings"}}
    write = {"tool_name": "write_file", "tool_input": {"file_path": "/etc/ttl.md", "content": "15 min"}}
    return observations([
        gemini("SessionStart", 0, source="startup"),
        gemini("BeforeAgent", 10, prompt="Run the tests and fix what fails"),
        gemini("BeforeTool", 20, **shell),
        gemini("AfterTool", 50, **shell, tool_response={
            "llmContent": "Command: pytest -q\nDirectory: (root)\nOutput: 1 failed, 11 passed\nError: (none)\n"
                          "Exit Code: 1\nSignal: (none)", "returnDisplay": "1 failed, 11 passed"}),
        gemini("BeforeTool", 60, **read),
        gemini("AfterTool", 61, **read, tool_response={"llmContent": "TOKEN_TTL = 300", "returnDisplay": ""}),
        gemini("AfterTool", 90, **replace, tool_response={"llmContent": "Successfully modified file"}),
        gemini("AfterTool", 100, **write, tool_response={"llmContent": "", "returnDisplay": "",
                                                          "error": {"message": "Permission denied", "type": "EACCES"}}),
        gemini("AfterAgent", 160, prompt="Run the tests and fix what fails", stop_hook_active=False,
               prompt_response="Fixed the TTL test; all 12 tests pass now. Should I also bump the refresh token "
                               "TTL? Next, I will update the docs."),
        gemini("SessionEnd", 170, reason="exit"),
    ], agent="gemini")


def test_gemini_shell_edit_and_after_agent() -> None:
    page = compile_session(gemini_session())
    assert page.frontmatter["created"] == "2026-08-21T09:30:00.000000Z"
    assert page.path == "_unsorted/sessions/2026-08-21-c1f0e2d3.md"
    assert section(page.text, "Prompts") == "- 09:30 Run the tests and fix what fails"
    assert "`pytest -q`: **failed** (exit 1)" in section(page.text, "Commands run")
    assert section(page.text, "Files touched").splitlines() == ["- `app/auth.py`: read, edited"]
    assert "write_file `/etc/ttl.md`: Permission denied" in section(page.text, "Errors and failures")
    assert "Tool calls: 4 · Failures: 2" in section(page.text, "Summary")
    assert "- When: 2026-08-21 09:30 → 09:32 UTC (3 min)" in section(page.text, "Summary")
    assert page.handoff["open_questions"] == ["Should I also bump the refresh token TTL?"]
    assert page.handoff["next_steps"] == ["Next, I will update the docs.",
                                          "app/auth.py: FIXME: read from settings"]
    assert page.handoff["summary"] == ("Run the tests and fix what fails. "
                                       "Fixed the TTL test; all 12 tests pass now.")


def test_a_huge_session_stays_under_64_kib_and_compiles_quickly(claude) -> None:
    prompt, edit, bash = claude["UserPromptSubmit"][0], claude["PostToolBatch"][1], claude["PostToolUseFailure"][0]
    payloads = []
    for i in range(5000):
        if i % 10 == 0:
            payloads.append({**prompt, "prompt": f"Step {i}: " + "explain the token refresh flow again " * 40})
        elif i % 10 < 6:
            unique = {"file_path": f"/home/dev/acme-api/src/m{i}.py", "command": f"pytest tests/test_{i}.py"}
            calls = [{**c, "tool_input": {**c["tool_input"], **unique}} for c in edit["tool_calls"]]
            payloads.append({**edit, "tool_calls": calls})
        else:
            payloads.append({**bash, "tool_input": {"command": f"npm test -- --grep case{i}"}})
    rows = observations(payloads, agent="claude-code")
    started = time.perf_counter()
    page = compile_session(rows)
    elapsed = time.perf_counter() - started
    assert elapsed < 5, f"compiling 5,000 events took {elapsed:.2f}s"
    assert len(page.text.encode()) <= MAX_PAGE_BYTES
    assert re.findall(r"^## (.+)$", page.text, re.M) == SECTIONS
    assert re.search(r"^- … [\d,]+ more$", section(page.text, "Files touched"), re.M)
    assert "Step 0:" in section(page.text, "Prompts") and "Step 4990:" in section(page.text, "Prompts")
    assert "Prompts: 500 · Tool calls: 7000 · Failures: 2000" in page.text
    assert yaml.safe_load(page.text.split("---\n")[1])["title"].startswith("Step 0: explain the token")


WEIRD_PAYLOADS = [
    None, [], ["a", 1], "text", 42, {}, {"tool_calls": "nope"}, {"tool_calls": [None, 1, {"tool_input": []}]},
    {"tool_name": ["Bash"], "tool_input": "rm -rf /tmp/x"},
    {"tool_name": "Bash", "tool_input": {"command": ["ls", 1, None]}},
    {"tool_name": "Edit", "tool_input": {"file_path": 12}}, {"tool_name": "apply_patch", "tool_input": [PATCH]},
    {"tool_name": "Bash", "tool_response": {"exit_code": "x", "metadata": [1]}, "error": {"nested": [1, {"a": None}]}},
    {"prompt": [{"type": "text", "text": "blocks"}, "plain", None]}, {"prompt": "x" * 2_000_000},
    {"last_assistant_message": ["not", "text"]}, {"tool_input": {"command": "\ud800\x00\x1b[31m red"}},
    {"tool_name": "Write", "tool_input": {"file_path": "/a/b.py", "content": "\n".join(["# TODO"] * 50_000)}},
]


@pytest.mark.parametrize("event", ["user-prompt", "pre-tool-use", "post-tool-use", "tool-failure", "stop",
                                   "nonsense", 7, None])
def test_any_payload_shape_compiles_without_raising(event) -> None:
    rows: list[Any] = ["not a row", None]
    for i, payload in enumerate(WEIRD_PAYLOADS):
        rows.append({"event": event, "session_id": "s/../x" if i % 2 else None, "agent": ["x"], "payload": payload,
                     "occurred_at": "2026-11-30T10:00:00.000000Z" if i % 3 else 17, "cwd": {"a": 1},
                     "tool_name": "Bash" if i % 4 else None, "body": None, "project": "../../etc"})
    rows.append({"event": "user-prompt", "payload": {"prompt": "ok?"}, "session_id": "s1"})
    page = compile_session(rows)
    assert page is not None and len(page.text.encode()) <= MAX_PAGE_BYTES
    meta = yaml.safe_load(page.text.split("---\n")[1])
    assert list(meta) == FRONTMATTER_KEYS
    assert re.fullmatch(r"[a-z0-9._-]+/sessions/[a-z0-9-]+-[a-z0-9._-]+\.md", page.path)
    assert ".." not in page.path


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["tool_name", "tool_input", "tool_response", "command", "file_path", "error", "prompt",
                         "tool_calls", "last_assistant_message", "exit_code", "content", "edits", "x"]),
        inner, max_size=5),
    max_leaves=25,
)
ROWS = st.lists(st.fixed_dictionaries({
    "event": st.sampled_from(["user-prompt", "pre-tool-use", "post-tool-use", "tool-failure", "stop", "other"]),
    "session_id": st.text(max_size=40), "agent": st.sampled_from(["claude-code", "codex", "gemini", ""]),
    "cwd": st.sampled_from(["/home/dev/acme-api", "", None]), "project": st.text(max_size=20),
    "tool_name": st.sampled_from(["Bash", "Edit", "apply_patch", "run_shell_command", "write_file", None]),
    "occurred_at": st.sampled_from(["2026-11-30T10:00:00.000000Z", "2026-11-30T11:30:00Z", "junk", ""]),
    "payload": JSON,
}), max_size=30)


@settings(max_examples=150, deadline=None, database=None)
@given(ROWS)
def test_generated_sessions_never_raise(rows) -> None:
    page = compile_session(rows)
    if page is not None:
        assert len(page.text.encode()) <= MAX_PAGE_BYTES
        assert list(yaml.safe_load(page.text.split("\n---\n")[0].removeprefix("---\n"))) == FRONTMATTER_KEYS
        assert page.text == compile_session(copy.deepcopy(rows)).text
