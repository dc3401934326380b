"""A session's events told as turns: what was asked, what was done, what failed, the reply."""

from __future__ import annotations

from typing import Any

from ai_memory.core.session_story import story_of

CWD = "/home/dev/acme-api"


def _ob(event: str, title: str, body: str = "", tool: str = "", **payload: Any) -> dict[str, Any]:
    return {"event": event, "title": title, "body": body, "tool_name": tool, "cwd": CWD, "agent": "claude",
            "project": "acme-api", "occurred_at": "2026-12-07T05:04:33.000000Z", "payload": payload}


def test_a_session_reads_as_turns_of_prompt_work_and_reply() -> None:
    story = story_of([
        _ob("session-start", "session start (startup)", model="claude-sonnet-4-6"),
        _ob("user-prompt", "Why does the login test fail?", "Why does the login test fail?"),
        _ob("pre-tool-use", "Bash: npm test", "tool: Bash", "Bash", tool_use_id="t1"),
        _ob("tool-failure", "Bash: npm test", "error: Exit code 1", "Bash", tool_use_id="t1"),
        _ob("post-tool-use", f"Edit: {CWD}/src/login.ts", "--- old", "Edit"),
        _ob("post-tool-use", f"Read: {CWD}/README.md", "", "Read"),
        _ob("user-prompt", "Go on", "Go on"),
        _ob("stop", "Fixed the login test.", "Fixed the login test."),
        _ob("session-end", "session end (exit)"),
    ])
    assert story.start is not None and "claude-sonnet-4-6" in story.start.text and story.end is not None
    assert [[s.kind for s in t.steps] for t in story.turns] == [["prompt", "error", "edit", "read"], ["prompt", "reply"]]
    failed = story.turns[0].steps[1]
    assert failed.text == "npm test" and failed.label == "failed" and "Exit code 1" in failed.detail  # one step, not two
    assert story.turns[0].steps[2].text == "src/login.ts"  # relative to the call's directory
    assert story.turns[0].prompt is not None and story.turns[0].steps[0].detail == ""  # the line says it all
    assert story.counts["prompt"] == 2 and story.agents == ["claude"] and story.projects == ["acme-api"]


def test_events_before_any_prompt_and_odd_shapes_still_read() -> None:
    story = story_of([_ob("post-tool-use", "Bash: ls", "tool: Bash", "Bash"), {"event": "other", "payload": None}])
    assert [s.kind for s in story.turns[0].steps] == ["command", "note"] and story.turns[0].prompt is None
    assert story_of([]).turns == [] and story_of([]).first_at == ""
