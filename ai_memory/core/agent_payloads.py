"""What an agent's payload means, before it is stored: the few places where a CLI's raw event
says something other than what happened.

- Gemini CLI prepends the SessionStart hook's output to the prompt it sends (a leading
  ``<hook_context>`` block) and hands BeforeAgent that prompt: the user typed only what follows.
  Stored as typed, the briefing would become the session's first prompt and title, and old
  briefings would flow back into memory.
- ai-memory's own MCP tool calls are not evidence (see ``own_tools``).
- A tool event that reports an error is a failure, and a prompt event without a prompt is none
  (``meant_kind``).
"""

from __future__ import annotations

import re
from typing import Any

from ai_memory.core.events import TOOL_CALL_KINDS, EventKind
from ai_memory.core.own_tools import own_tool, without_evidence

# The keys an agent names its working directory by (the first present wins).
CWD_KEYS = ("cwd", "current_dir", "working_dir", "directory")
_HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.DOTALL)


def typed_prompt(prompt: str) -> str:
    """The prompt without a leading hook-context block an agent added to it."""
    return _HOOK_CONTEXT.sub("", prompt, count=1)


def meant_kind(kind: EventKind, payload: dict[str, Any]) -> EventKind:
    """What the event is, where its name says otherwise: a tool event reporting an error is a
    failure (Gemini's AfterTool, Cline's PostToolUse); a prompt event with an empty prompt is
    no prompt (Qwen Code fires UserPromptSubmit again after every tool batch, with ``""``)."""
    if kind is EventKind.POST_TOOL_USE and payload.get("error"):
        return EventKind.TOOL_FAILURE
    if kind is EventKind.USER_PROMPT and isinstance(payload.get("prompt"), str) and not payload["prompt"].strip():
        return EventKind.OTHER
    return kind


def as_meant(kind: EventKind, payload: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(the payload to store, whether it may be searched)."""
    if kind in TOOL_CALL_KINDS and (tool := own_tool(payload)) is not None:
        return without_evidence(payload, tool), False
    prompt = payload.get("prompt")
    if kind is EventKind.USER_PROMPT and isinstance(prompt, str) and (typed := typed_prompt(prompt)) != prompt:
        return {**payload, "prompt": typed, "hook_context_removed": True}, True
    return payload, True
