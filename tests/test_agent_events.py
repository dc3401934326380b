"""Events mean what they say: payloads shaped as the real CLIs send them (recorded by the agent
suite), ai-memory's own tool calls kept out of evidence, Gemini's prompt and reply as typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Daemon, run_cli

QUERY = "quokkaflux vorpal"
RESULT = "1. Webhook senders retry 5 times (zebracorn-limit)"


def own_calls(session: str, cwd: str) -> list[tuple[str, dict[str, Any]]]:
    """One memory_query call as each CLI reports it, Pre and Post."""
    base = {"session_id": session, "cwd": cwd}
    claude = {**base, "tool_name": "mcp__ai-memory__memory_query", "tool_input": {"query": QUERY},
              "tool_use_id": "toolu_1"}
    codex = {**base, "turn_id": "t1", "tool_name": "mcp__ai_memory__memory_query", "tool_input": {"query": QUERY},
             "tool_use_id": "call_1"}
    gemini = {**base, "tool_name": "mcp_ai-memory_memory_query", "tool_input": {"query": QUERY},
              "mcp_context": {"server_name": "ai-memory", "tool_name": "memory_query", "command": "/x", "args": []}}
    response = {"content": [{"type": "text", "text": RESULT}]}
    return [("claude", {**claude, "hook_event_name": "PreToolUse"}),
            ("claude", {**claude, "hook_event_name": "PostToolUse", "tool_response": response}),
            ("codex", {**codex, "hook_event_name": "PreToolUse"}),
            ("codex", {**codex, "hook_event_name": "PostToolUse", "tool_response": response}),
            ("gemini", {**gemini, "hook_event_name": "BeforeTool"}),
            ("gemini", {**gemini, "hook_event_name": "AfterTool", "tool_response": {"llmContent": [{"text": RESULT}]}})]


def post(daemon: Daemon, agent: str, payload: dict[str, Any]) -> None:
    status, body = daemon.post_hook(payload, agent=agent)
    assert status == 202, body


def raw_hits(daemon: Daemon, text: str) -> list[dict[str, Any]]:
    status, reply, _ = daemon.request("POST", "/v1/query", {"q": text, "all": True, "k": 10})
    assert status == 200, reply
    return reply["raw_hits"]


def observations(daemon: Daemon, session: str) -> list[dict[str, Any]]:
    return daemon.request("GET", f"/v1/sessions/{session}/observations")[1]["observations"]


def test_own_tool_calls_are_kept_but_never_found(daemon: Daemon, tmp_path: Path) -> None:
    for agent, payload in own_calls("own-1", str(tmp_path)):
        post(daemon, agent, payload)
    # another server's tool of the same name is evidence like any tool
    post(daemon, "claude", {"session_id": "own-1", "cwd": str(tmp_path), "hook_event_name": "PostToolUse",
                            "tool_name": "mcp__notes__memory_query", "tool_input": {"query": "quokkaflux other"}})
    stored = observations(daemon, "own-1")
    own = [o for o in stored if o["tool_name"] != "mcp__notes__memory_query"]
    assert [o["title"] for o in own] == ["used memory: memory_query"] * 6
    assert all("tool_input" not in o["payload"] and "tool_response" not in o["payload"] for o in own)
    assert all(QUERY not in str(o) and "zebracorn" not in str(o) for o in own)
    hits = raw_hits(daemon, "quokkaflux")
    assert [h["id"] for h in hits] == \
        [o["id"] for o in stored if o["tool_name"] == "mcp__notes__memory_query"]
    assert raw_hits(daemon, "zebracorn") == []


def test_own_tool_calls_stay_unsearchable_after_a_reindex(daemon: Daemon, tmp_path: Path) -> None:
    for agent, payload in own_calls("own-2", str(tmp_path)):
        post(daemon, agent, payload)
    daemon.stop()
    assert run_cli(daemon.data_dir, "reindex").returncode == 0
    daemon.start()
    assert raw_hits(daemon, "quokkaflux") == [] and len(observations(daemon, "own-2")) == 6


def test_the_page_says_memory_was_used_and_counts_only_real_tool_calls(daemon: Daemon, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    post(daemon, "claude", {"session_id": "own-3", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                            "prompt": "Check the retries"})
    for agent, payload in own_calls("own-3", cwd)[:2]:
        post(daemon, agent, payload)
    post(daemon, "claude", {"session_id": "own-3", "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                            "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "3 passed"}})
    post(daemon, "claude", {"session_id": "own-3", "cwd": cwd, "hook_event_name": "Stop",
                            "last_assistant_message": "Retries are fine."})
    status, reply, _ = daemon.request("POST", "/v1/sessions/own-3/finalize", {})
    assert status == 200, reply
    page = (daemon.data_dir / "wiki" / reply["page"]).read_text()
    assert "- Used memory: memory_query ×1" in page and "Tool calls: 1 ·" in page
    assert QUERY not in page and "zebracorn" not in page and "`pytest -q`" in page


@pytest.mark.parametrize("separator", ["\n\n", "\n", " "])
def test_gemini_prompt_is_what_the_user_typed(daemon: Daemon, tmp_path: Path, separator: str) -> None:
    """Gemini CLI sends `<hook_context>{SessionStart output}</hook_context>\\n\\n{prompt}` to BeforeAgent."""
    briefing = "<ai-memory-briefing>\nHandoff from codex: old work\n</ai-memory-briefing>"
    session = f"gem-{len(separator)}"
    post(daemon, "gemini", {"session_id": session, "cwd": str(tmp_path), "hook_event_name": "BeforeAgent",
                            "prompt": f"<hook_context>{briefing}</hook_context>{separator}Fix the flaky test"})
    post(daemon, "gemini", {"session_id": session, "cwd": str(tmp_path), "hook_event_name": "AfterAgent",
                            "prompt": "Fix the flaky test", "prompt_response": "The test is stable now.",
                            "stop_hook_active": False})
    [prompt, stop] = observations(daemon, session)
    assert prompt["title"] == "Fix the flaky test" and prompt["payload"]["prompt"] == "Fix the flaky test"
    assert prompt["payload"]["hook_context_removed"] is True and "briefing" not in prompt["body"]
    assert stop["title"] == "The test is stable now."  # the reply is prompt_response, not "stop"
    status, reply, _ = daemon.request("POST", f"/v1/sessions/{session}/finalize", {})
    page = (daemon.data_dir / "wiki" / reply["page"]).read_text()
    assert "title: Fix the flaky test" in page and "Handoff from codex" not in page
    assert "Last reply: The test is stable now." in page


def test_a_prompt_that_only_mentions_hook_context_is_kept(daemon: Daemon, tmp_path: Path) -> None:
    text = "Why does Gemini wrap things in <hook_context>?"
    post(daemon, "gemini", {"session_id": "gem-q", "cwd": str(tmp_path), "hook_event_name": "BeforeAgent", "prompt": text})
    [prompt] = observations(daemon, "gem-q")
    assert prompt["payload"]["prompt"] == text and "hook_context_removed" not in prompt["payload"]


def test_each_agents_event_names_mean_what_they_say() -> None:
    from ai_memory.core.events import EventKind, normalize_event

    assert normalize_event("TaskCompleted") is EventKind.OTHER  # Claude Code's task list, not Cline's run end
    assert normalize_event("TaskComplete") is EventKind.SESSION_END
    assert normalize_event("userPromptSubmitted") is EventKind.USER_PROMPT
    assert normalize_event("afterAgentResponse") is EventKind.STOP


def test_a_tool_input_nested_past_the_parser_is_kept_as_text(daemon: Daemon, tmp_path: Path) -> None:
    hostile = "[" * 100_000
    payload = {"hook_event_name": "postToolUse", "conversation_id": "deep-1", "cursor_version": "2.3",
               "workspace_roots": [str(tmp_path)], "tool_name": "Shell", "tool_input": hostile}
    status, reply, _ = daemon.request("POST", "/hook?agent=cursor", payload)
    assert status in (200, 201, 202), reply
    assert observations(daemon, "deep-1")[0]["event"] == "post-tool-use"
