"""Hook events: the closed set of event kinds and the mapping from each agent's spelling.

Agents name the same lifecycle moment differently (Claude's ``UserPromptSubmit`` is Gemini's
``BeforeAgent``); everything downstream speaks only the closed set below. Unknown names map to
``other`` and are stored, never rejected, because agents add events faster than we ship.
"""

from __future__ import annotations

import enum
import re


class EventKind(str, enum.Enum):
    SESSION_START = "session-start"
    USER_PROMPT = "user-prompt"
    PRE_TOOL_USE = "pre-tool-use"
    POST_TOOL_USE = "post-tool-use"
    TOOL_FAILURE = "tool-failure"
    PRE_COMPACT = "pre-compact"
    POST_COMPACT = "post-compact"
    NOTIFICATION = "notification"
    STOP = "stop"
    SUBAGENT_START = "subagent-start"
    SUBAGENT_STOP = "subagent-stop"
    SESSION_END = "session-end"
    OTHER = "other"


# A session's start and end say nothing of what was done: no evidence, no context for a turn.
SESSION_MARKERS = frozenset({EventKind.SESSION_START.value, EventKind.SESSION_END.value})
# A tool call's body is what ``core.tool_text`` made of its input and output: code, commands
# and their output as lines, never markdown (``*args`` is not emphasis, ``# x`` no heading).
TOOL_CALL_KINDS = (EventKind.PRE_TOOL_USE, EventKind.POST_TOOL_USE, EventKind.TOOL_FAILURE)
TOOL_CALL_EVENTS = frozenset(kind.value for kind in TOOL_CALL_KINDS)  # as observations store them


def is_markdown_event(event: str) -> bool:
    """Whether an observation of this kind is written in markdown (a prompt, a reply, a summary)."""
    return event not in TOOL_CALL_EVENTS


# Spellings after folding case and dropping '-', '_' and '.', e.g. "UserPromptSubmit",
# "user_prompt_submit" and "user-prompt" all fold to a key below.
_ALIASES: dict[str, EventKind] = {
    "sessionstart": EventKind.SESSION_START,
    "sessioncreated": EventKind.SESSION_START,
    "taskstart": EventKind.SESSION_START,  # Cline: a task is its session
    "taskresume": EventKind.SESSION_START,
    "userpromptsubmit": EventKind.USER_PROMPT,
    "userprompt": EventKind.USER_PROMPT,
    "beforeagent": EventKind.USER_PROMPT,
    "beforesubmitprompt": EventKind.USER_PROMPT,
    "userpromptsubmitted": EventKind.USER_PROMPT,
    "pretooluse": EventKind.PRE_TOOL_USE,
    "beforetool": EventKind.PRE_TOOL_USE,
    "toolexecutebefore": EventKind.PRE_TOOL_USE,
    "posttooluse": EventKind.POST_TOOL_USE,
    "posttoolbatch": EventKind.POST_TOOL_USE,
    "aftertool": EventKind.POST_TOOL_USE,
    "toolexecuteafter": EventKind.POST_TOOL_USE,
    "aftershellexecution": EventKind.POST_TOOL_USE,  # Cursor's per-kind tool events
    "afterfileedit": EventKind.POST_TOOL_USE,
    "aftermcpexecution": EventKind.POST_TOOL_USE,
    "posttoolusefailure": EventKind.TOOL_FAILURE,
    "toolfailure": EventKind.TOOL_FAILURE,
    "precompact": EventKind.PRE_COMPACT,
    "precompress": EventKind.PRE_COMPACT,
    "postcompact": EventKind.POST_COMPACT,
    "postcompaction": EventKind.POST_COMPACT,
    "notification": EventKind.NOTIFICATION,
    "stop": EventKind.STOP,
    "stopfailure": EventKind.STOP,
    "afteragent": EventKind.STOP,
    "afteragentresponse": EventKind.STOP,
    "agentstop": EventKind.STOP,
    "subagentstart": EventKind.SUBAGENT_START,
    "subagentstop": EventKind.SUBAGENT_STOP,
    "subagentend": EventKind.SUBAGENT_STOP,
    "sessionend": EventKind.SESSION_END,
    "taskcomplete": EventKind.SESSION_END,  # Cline: a run ends with its reply
    "taskcancel": EventKind.SESSION_END,
    "sessionshutdown": EventKind.SESSION_END,
    "taskerror": EventKind.STOP,
}

_FOLD = re.compile(r"[-_.\s]")


def normalize_event(name: str) -> EventKind:
    """Map any agent's event name to the closed set (unknown names give OTHER)."""
    return _ALIASES.get(_FOLD.sub("", name).lower(), EventKind.OTHER)
