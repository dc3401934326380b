"""A session's events as a story a person reads: turns, each what was asked, what the agent did
(files read and changed, commands run, errors) and what it replied.

Pure: the observation dicts the store returns (``session_observations``) in, steps out. A tool
call's Pre and Post events are one step (matched by tool_use_id, else by tool and subject), so
a call that ran and then failed reads once, as the failure. What a tool does to files is
``tool_calls.action_of``'s rule, its paths shown relative to the call's cwd as the session page
shows them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.events import TOOL_CALL_EVENTS, EventKind
from ai_memory.core.tool_calls import action_of, is_shell, relative_path

# The kinds of step, in the words the view labels them with.
KIND_LABELS = {"prompt": "asked", "reply": "replied", "command": "ran", "edit": "changed", "read": "read",
               "error": "failed", "memory": "memory", "tool": "tool", "note": "note", "start": "started",
               "end": "ended"}
_FILE_KINDS = {"read": "read", "edited": "edit", "written": "edit"}


@dataclass(frozen=True)
class Step:
    """One thing that happened: its kind (a key of ``KIND_LABELS``), when, its one line, and the
    whole text behind it ("" when the line says it all)."""

    kind: str
    at: str
    text: str
    detail: str = ""
    tool: str = ""

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]


@dataclass
class Turn:
    """A prompt and what followed it, up to the next prompt (the first turn may have none)."""

    steps: list[Step] = field(default_factory=list)

    @property
    def prompt(self) -> Step | None:
        return self.steps[0] if self.steps and self.steps[0].kind == "prompt" else None

    @property
    def counts(self) -> Counter[str]:
        return Counter(step.kind for step in self.steps)


@dataclass
class Story:
    """The session's start, its turns and its end; who ran it and in which project."""

    turns: list[Turn] = field(default_factory=list)
    start: Step | None = None
    end: Step | None = None
    agents: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)

    @property
    def counts(self) -> Counter[str]:
        return sum((turn.counts for turn in self.turns), Counter())

    @property
    def first_at(self) -> str:
        return (self.start or next((t.steps[0] for t in self.turns if t.steps), Step("note", "", ""))).at

    @property
    def last_at(self) -> str:
        steps = [s for t in self.turns for s in t.steps]
        return (self.end or (steps[-1] if steps else None) or self.start or Step("note", "", "")).at


def story_of(observations: list[dict[str, Any]]) -> Story:
    """The story of a session's observations, in the order they happened."""
    story, pending = Story(), {}  # type: Story, dict[Any, tuple[Turn, int]]
    for ob in observations:
        step = step_of(ob)
        if step.kind == "start" and story.start is None and not story.turns:
            story.start = step
        elif step.kind == "end":
            story.end = step
        else:
            _add(story, step, ob, pending)
        for key, seen in (("agent", story.agents), ("project", story.projects)):
            if ob.get(key) and ob[key] not in seen:
                seen.append(str(ob[key]))
    return story


def _add(story: Story, step: Step, ob: dict[str, Any], pending: dict[Any, tuple[Turn, int]]) -> None:
    """Append ``step`` to the story: a prompt opens a turn; a call's Post or failure takes the
    place of its Pre."""
    if step.kind == "prompt" or not story.turns:
        story.turns.append(Turn())
    turn = story.turns[-1]
    key = _call_key(ob, step) if ob.get("event") in TOOL_CALL_EVENTS else None
    if key is not None and key in pending and ob.get("event") != EventKind.PRE_TOOL_USE.value:
        where, index = pending.pop(key)
        where.steps[index] = step
        return
    if key is not None and ob.get("event") == EventKind.PRE_TOOL_USE.value:
        pending[key] = (turn, len(turn.steps))
    turn.steps.append(step)


def _payload(ob: dict[str, Any]) -> dict[str, Any]:
    payload = ob.get("payload")
    return payload if isinstance(payload, dict) else {}


def _call_key(ob: dict[str, Any], step: Step) -> Any:
    payload = _payload(ob)
    tid = payload.get("tool_use_id") or payload.get("toolUseId") or payload.get("call_id")
    return ("id", str(tid)) if tid else (step.tool, step.text)


def step_of(ob: dict[str, Any]) -> Step:
    """One observation as a step: its kind and its line."""
    event, title, body = str(ob.get("event") or ""), str(ob.get("title") or ""), str(ob.get("body") or "")
    at, tool = str(ob.get("occurred_at") or ""), str(ob.get("tool_name") or "")
    payload = _payload(ob)
    if event == EventKind.USER_PROMPT.value:
        return Step("prompt", at, title, _more(body, title))
    if event in (EventKind.STOP.value, EventKind.SUBAGENT_STOP.value):
        kind = "error" if payload.get("error") else "reply" if event == EventKind.STOP.value else "note"
        return Step(kind, at, title, _more(body, title))
    if event == EventKind.SESSION_START.value:
        model = payload.get("model")
        return Step("start", at, f"{title} · {model}" if isinstance(model, str) and model else title)
    if event == EventKind.SESSION_END.value:
        return Step("end", at, title, body)
    if event in TOOL_CALL_EVENTS:
        return _tool_step(event, at, title, body, tool, str(ob.get("cwd") or ""))
    return Step("note", at, title, _more(body, title))


def _tool_step(event: str, at: str, title: str, body: str, tool: str, cwd: str) -> Step:
    if title.startswith("used memory:"):
        return Step("memory", at, title.removeprefix("used memory:").strip(), tool=tool)
    subject = title.removeprefix(f"{tool}:").strip() if tool else title
    action = action_of(tool)
    if action:
        subject = relative_path(subject, cwd)
    kind = "error" if event == EventKind.TOOL_FAILURE.value else _FILE_KINDS.get(action) or (
        "command" if is_shell(tool) else "tool")
    return Step(kind, at, subject or tool or event, body, tool)


def _more(body: str, line: str) -> str:
    """The body when it says more than its first line."""
    return "" if body.strip() == line.strip() else body
