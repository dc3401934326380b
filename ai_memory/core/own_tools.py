"""ai-memory's own MCP tools as agents name them in hook events: memory must not remember itself.

A ``memory_query`` call seen by a PreToolUse hook carries the query; its PostToolUse carries
what memory answered. Stored as evidence, the first comes back as the top raw hit of a search
that found nothing else, and the second returns old answers as new ones. So an event of one of
our own tools keeps only which tool was used (``used memory: memory_query``), never its input
or output, and is not indexed for search.

Each CLI spells an MCP tool its own way: Claude Code ``mcp__ai-memory__memory_query``, Codex
``mcp__ai_memory__memory_query``, Gemini CLI ``mcp_ai-memory_memory_query`` (with
``mcp_context.server_name``), Qwen Code as Claude Code, Copilot CLI ``ai-memory-memory_query``,
OpenCode ``ai-memory_memory_query``, Cline ``ai-memory__memory_query``, each recorded from the
real CLIs by the agent suite.
"""

from __future__ import annotations

import re
from typing import Any

SERVER_NAME = "ai-memory"
TOOL_NAMES = (
    "memory_query", "memory_read_page", "memory_recent", "memory_status", "memory_meta", "memory_briefing",
    "memory_read_session_observations", "memory_lint", "memory_write_page", "memory_correct", "memory_delete_page",
    "memory_feedback", "memory_handoff_begin", "memory_handoff_list", "memory_handoff_accept", "memory_handoff_cancel",
    "memory_message_send", "memory_message_list", "memory_message_pop", "memory_message_cancel",
)
_QUALIFIED = re.compile(r"^(?:mcp_{1,2}ai[-_]memory_{1,2}|ai-memory(?:[-/]|_{1,2}))(memory_[a-z_]+)$")
# What an event of our own tool keeps: who, where, which call; no input, no output.
_KEPT = ("hook_event_name", "session_id", "cwd", "tool_name", "tool_use_id", "turn_id", "prompt_id", "timestamp",
         "agent_id", "agent_type")


def own_tool(payload: dict[str, Any]) -> str | None:
    """The bare name of the ai-memory tool this event is about, or None for any other tool."""
    context = payload.get("mcp_context")
    if isinstance(context, dict) and context.get("server_name") == SERVER_NAME:
        name = context.get("tool_name")
        return name if name in TOOL_NAMES else None
    found = _QUALIFIED.match(str(payload.get("tool_name") or payload.get("toolName") or ""))
    return found.group(1) if found and found.group(1) in TOOL_NAMES else None


def without_evidence(payload: dict[str, Any], tool: str) -> dict[str, Any]:
    """The event as it is kept: the call's identity and the tool's bare name."""
    kept = {key: payload[key] for key in _KEPT if key in payload}
    return {**kept, "ai_memory_tool": tool}
