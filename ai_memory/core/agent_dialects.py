"""Each agent's hook payload in common terms: the fields of Claude Code's hooks, which every
reader (ingest, the briefing, prompt recall, session pages) takes.

Claude Code, Codex, Gemini CLI and Qwen Code already send them, and ai-memory's OpenCode plugin
builds them. Cursor, GitHub Copilot CLI and Cline name the same facts otherwise (field by field
in docs/internals/capture.md's agent table). A translation only adds the common field where the payload lacks
it; every field the agent sent is kept as it came, so nothing it said is lost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from ai_memory.core.payload_text import as_dict

Payload = dict[str, Any]

# What the hook command names an agent by (the shell client's AGENT argument).
CURSOR, COPILOT, CLINE = "cursor", "copilot", "cline"
# Cursor runs the hooks of Claude Code's settings too ("third-party hooks"), with its own payload,
# which says so by this field.
CURSOR_MARK = "cursor_version"


def speaking_agent(agent: str, payload: Payload) -> str:
    """Who sent the event: Cursor when it ran Claude Code's hooks (its payload says so), else the
    agent the hook command names."""
    return CURSOR if agent == "claude" and CURSOR_MARK in payload else agent


def cursor_event_key(agent: str, payload: Payload, owner: str) -> str | None:
    """One key for one Cursor event, whichever hook delivered it: Cursor hands the same payload to
    ai-memory's Cursor hook and to the Claude Code hook it runs too, and it is stored once. The
    owner is part of it: another user's event, however alike, is never taken for a repeat."""
    if speaking_agent(agent, payload) != CURSOR or CURSOR_MARK not in payload:
        return None
    canonical = json.dumps([owner, payload], sort_keys=True, ensure_ascii=True, default=str)
    return "cursor-" + hashlib.sha256(canonical.encode()).hexdigest()[:48]


def in_common_terms(agent: str, payload: Payload) -> Payload:
    """``payload`` with the common fields its agent's own names stand for (a new dict)."""
    translate = _DIALECTS.get(speaking_agent(agent, payload))
    if translate is None:
        return payload
    return _filled(payload, translate(payload))


def _filled(payload: Payload, common: Payload) -> Payload:
    """Common fields added where the payload has none of its own. Two are replaced: a tool input
    the agent sent as JSON text, by what it parses to (its words become searchable lines), and an
    error the agent sent as an object, by its message (what a page shows)."""
    out = dict(payload)
    for key, value in common.items():
        if value is None:
            continue
        if out.get(key) in (None, "") or _replaces(key, out[key], value):
            out[key] = value
    return out


def _replaces(key: str, theirs: Any, ours: Any) -> bool:
    if key == "tool_input":
        return isinstance(theirs, str) and isinstance(ours, (dict, list))
    return key == "error" and isinstance(theirs, dict) and isinstance(ours, str)


def _first(items: Any) -> Any:
    return items[0] if isinstance(items, list) and items else None


def _json_object(value: Any) -> Any:
    """A tool input sent as JSON text, parsed; anything else as it is."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
            return value
    return value


# ---- Cursor ---------------------------------------------------------------------------------
# Every event: conversation_id (and session_id in newer releases), workspace_roots, hook_event_name.
# postToolUse: tool_name, tool_input, tool_output, cwd; postToolUseFailure: error_message. afterShellExecution: command, output.
# afterFileEdit: file_path, edits[{old_string, new_string}]. afterMCPExecution: tool_name,
# tool_input and result_json as JSON text. afterAgentResponse: text (the reply).

def _cursor(p: Payload) -> Payload:
    event = str(p.get("hook_event_name") or "")
    common: Payload = {"session_id": p.get("conversation_id"), "cwd": _first(p.get("workspace_roots")),
                       "error": p.get("error_message")}
    if event == "afterShellExecution":
        common.update(tool_name="Shell", tool_input={"command": p.get("command")}, tool_response=p.get("output"))
    elif event == "afterFileEdit":
        common.update(tool_name="Edit", tool_input={"file_path": p.get("file_path"), "edits": p.get("edits")})
    elif event == "afterMCPExecution":
        common.update(tool_input=_json_object(p.get("tool_input")), tool_response=_json_object(p.get("result_json")))
    elif event == "afterAgentResponse":
        common["last_assistant_message"] = p.get("text")
    if "tool_output" in p:
        common["tool_response"] = _json_object(p.get("tool_output"))
    if isinstance(p.get("tool_input"), str):
        common["tool_input"] = _json_object(p["tool_input"])
    return common


# ---- GitHub Copilot CLI ----------------------------------------------------------------------
# camelCase (its hooks named in camelCase): sessionId, cwd, prompt, toolName, toolArgs (an object;
# JSON text in older releases), toolResult {resultType, textResultForLlm}; a failed call comes as
# postToolUseFailure with error (text); source, reason, initialPrompt. A subagent's events carry
# its own sessionId (= agentId) and parentAgentId, the session it works for.

def _copilot(p: Payload) -> Payload:
    result = as_dict(p.get("toolResult"))
    error = p.get("error")
    session = p.get("sessionId")
    if p.get("parentAgentId") and p.get("agentId") == session:
        session = p["parentAgentId"]
    return {
        "session_id": session,
        "tool_name": p.get("toolName"),
        "tool_input": _json_object(p.get("toolArgs")),
        "tool_response": result.get("textResultForLlm"),
        "error": error.get("message") if isinstance(error, dict) else error,
        "subagent_id": p.get("agentId") if session != p.get("sessionId") else None,
    }


# ---- Cline ----------------------------------------------------------------------------------
# Every hook: sessionContext.rootSessionId (the session; taskId is its conversation),
# workspaceRoots, hookName (Cline's internal name, not the hook file's: the event comes from the
# hook command). PostToolUse: tool_result {name, input, output}, output of run_commands a list of
# {query, result, success, error}. TaskComplete: turn {outputText}. TaskError: error {message}.

def _cline(p: Payload) -> Payload:
    context = as_dict(p.get("sessionContext"))
    call = as_dict(p.get("tool_result"))
    turn = as_dict(p.get("turn"))
    return {
        "session_id": context.get("rootSessionId") or p.get("taskId"),
        "cwd": _first(p.get("workspaceRoots")),
        "tool_name": call.get("name"),
        "tool_input": call.get("input"),
        "tool_response": call.get("output"),
        "error": _cline_failure(call.get("output")) or _message(p.get("error")),
        "last_assistant_message": turn.get("outputText"),
    }


def _cline_failure(output: Any) -> str | None:
    """What failed in a call's output (Cline reports a command that failed as a success)."""
    items = output if isinstance(output, list) else []
    failed = [i for i in items if isinstance(i, dict) and i.get("success") is False]
    return "\n".join(str(i.get("error") or i.get("result") or "failed") for i in failed) or None


def _message(error: Any) -> Any:
    return error.get("message") if isinstance(error, dict) else error


# ---- what a hook prints to add context ----------------------------------------------------------

def context_output(agent: str, event: str, text: str) -> Payload:
    """The JSON a hook prints to put ``text`` before the model (the briefing at a session's
    start, prompt recall beside a prompt), in the shape ``agent`` reads; ``{}`` adds nothing."""
    if not text:
        return {}
    if agent == CURSOR:
        return {"additional_context": text}
    if agent == COPILOT:
        return {"additionalContext": text}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


_DIALECTS: dict[str, Callable[[Payload], Payload]] = {CURSOR: _cursor, COPILOT: _copilot, CLINE: _cline}
