"""Session pages by rules: a session's observations become a markdown page and a handoff.

``compile_session`` reads the observation dicts the store returns (``session_observations``)
and writes down what a person picking the work up would ask: what was asked, which files
were read or changed, which commands ran and failed, what is still open, what comes next.
No model, no clock, no I/O: the same observations always give byte-identical text. A tool
call's Pre and Post events count once (matched by tool_use_id, else by tool and input); file
paths are shown relative to the call's cwd. Payloads are read defensively (no shape or size
raises) and the page stays under 64 KiB by keeping the first and last items of long lists.
What a tool call did is read in ``tool_calls``; what the last reply leaves open in
``reply_items``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TypeVar

import yaml

from ai_memory.core.clock import parse_utc
from ai_memory.core import reply_items
from ai_memory.core.entities import extract_entities, normalize_entity
from ai_memory.core.events import TOOL_CALL_KINDS, EventKind, normalize_event
from ai_memory.core.names import UNSORTED, project_name, safe_name
from ai_memory.core.own_tools import own_tool
from ai_memory.core.payload_text import as_dict, clip, code_span, collapsed, first_of, one_line, text_of
from ai_memory.core.tool_calls import ToolCall, tool_lists

T = TypeVar("T")

__all__ = ["MAX_PAGE_BYTES", "SessionPage", "compile_session"]

MAX_PAGE_BYTES = 64 * 1024
TITLE_CHARS = 80
SUMMARY_CHARS = 300
LISTED_FILES = 50  # files in the frontmatter and the handoff
HANDOFF_ITEMS = 20  # open questions and next steps
PAGE_ENTITIES = 30
# Body list lengths before the page has to shrink (then all of them halve until it fits).
_LIST_CAPS = {"prompts": 100, "files": 200, "commands": 150, "errors": 60, "questions": 20, "steps": 20}

_REPLY_KEYS = ("last_assistant_message", "lastAssistantMessage", "prompt_response", "last-assistant-message")

_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
_SCAFFOLD = ("<", "Caveat:", "[Request interrupted")


@dataclass(frozen=True)
class SessionPage:
    """A compiled session: the page file (path relative to the wiki dir, text) and its handoff."""

    path: str  # "<project>/sessions/<YYYY-MM-DD>-<short-id>.md"
    text: str  # the whole markdown file: YAML frontmatter + body
    frontmatter: dict[str, Any]
    handoff: dict[str, Any]  # session_id, project, cwd, from_agent, summary, open_questions, files_touched,
    #                next_steps, created_at
    entities: list[str]


@dataclass
class _Digest:
    """What the observations say, gathered in one pass."""

    prompts: list[tuple[int, str, str]] = field(default_factory=list)  # (seq, at, text)
    replies: list[tuple[int, str]] = field(default_factory=list)  # (seq, text) of main-agent stops
    calls: list[ToolCall] = field(default_factory=list)
    api_errors: list[tuple[str, str]] = field(default_factory=list)  # (at, text)
    pending: dict[Any, list[ToolCall]] = field(default_factory=dict)
    memory_calls: dict[str, set[str]] = field(default_factory=dict)  # ai-memory tool -> its calls' keys
    stamps: list[str] = field(default_factory=list)
    counts: dict[str, Counter[str]] = field(  # most common wins: session_id, agent, project, cwd
        default_factory=lambda: {k: Counter() for k in ("session_id", "agent", "project", "cwd")})


def _minutes(start: str, end: str) -> int:
    try:
        return max(0, round((parse_utc(end) - parse_utc(start)).total_seconds() / 60))
    except (ValueError, TypeError, AttributeError):  # unparseable, or not text
        return 0


def _kind(ob: dict[str, Any], payload: dict[str, Any]) -> EventKind:
    try:
        return EventKind(ob.get("event"))
    except (ValueError, TypeError):
        return normalize_event(text_of(ob.get("source_event") or payload.get("hook_event_name"), 200))


# ---------------------------------------------------------------- one pass over the events


def _prompt_text(payload: dict[str, Any], ob: dict[str, Any]) -> str:
    value = first_of(payload, ("prompt", "message", "text"))
    if isinstance(value, list):  # content blocks
        value = "\n".join(text_of(b.get("text") if isinstance(b, dict) else b) for b in value[:50])
    return (text_of(value) or text_of(ob.get("body"))).strip()


def _fingerprint(name: str, tool_input: Any) -> Any:
    try:
        return name, json.dumps(tool_input, sort_keys=True, default=str)[:400]
    except (TypeError, ValueError, RecursionError):
        return name, ""


def _add_call(d: _Digest, kind: EventKind, item: dict[str, Any], at: str, cwd: str, default_name: str) -> None:
    """Merge a Pre with its Post/Failure: by tool_use_id, else by tool name and input."""
    name = one_line(item.get("tool_name") or item.get("toolName") or default_name, 80) or "tool"
    tool_input = item.get("tool_input", item.get("toolInput"))
    tid = text_of(first_of(item, ("tool_use_id", "toolUseId", "call_id")), 200)
    key = ("id", tid) if tid else _fingerprint(name, tool_input)
    waiting = d.pending.get(key, [])
    if kind is EventKind.PRE_TOOL_USE:
        if not (tid and waiting):  # a repeated Pre for one id is the same call
            call = ToolCall(name, tool_input, at, cwd)
            d.calls.append(call)
            d.pending.setdefault(key, []).append(call)
        return
    if waiting:
        call = waiting.pop(0)
    else:
        call = ToolCall(name, tool_input, at, cwd)
        d.calls.append(call)
    call.response = item.get("tool_response", item.get("tool_output", item.get("result")))
    error = item.get("error") or as_dict(call.response).get("error")
    call.error = _error_text(error)
    call.failed = kind is EventKind.TOOL_FAILURE or bool(error)
    call.interrupted = item.get("is_interrupt") is True or as_dict(call.response).get("interrupted") is True


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        error = first_of(error, ("message", "error", "details")) or json.dumps(error, default=str)[:2000]
    if isinstance(error, list):
        error = "; ".join(text_of(e) for e in error[:5])
    return text_of(error, 4000).strip()


def _used_memory(d: _Digest, tool: str, kind: EventKind, payload: dict[str, Any], seq: int) -> None:
    """One of ai-memory's own tools: counted, never evidence. A call is its tool_use_id, else
    its completion (agents without ids send no id on either half)."""
    tid = text_of(first_of(payload, ("tool_use_id", "toolUseId", "call_id")), 200)
    if tid or kind is not EventKind.PRE_TOOL_USE:
        d.memory_calls.setdefault(one_line(tool, 80), set()).add(tid or f"event-{seq}")


def _digest(observations: list[Any]) -> _Digest:
    d = _Digest()
    for seq, ob in enumerate(observations):
        if not isinstance(ob, dict):
            continue
        payload = as_dict(ob.get("payload"))
        stamp = ob.get("occurred_at")
        at = stamp if isinstance(stamp, str) and _STAMP.match(stamp) else ""
        if at:
            d.stamps.append(at)
        for key, counter in d.counts.items():
            if (value := one_line(ob.get(key), 4096)):
                counter[value] += 1
        kind = _kind(ob, payload)
        cwd = text_of(ob.get("cwd"), 4096)
        if kind is EventKind.USER_PROMPT and (text := _prompt_text(payload, ob)):
            d.prompts.append((seq, at, text))
        elif kind in TOOL_CALL_KINDS and (tool := payload.get("ai_memory_tool") or own_tool(payload)):
            _used_memory(d, str(tool), kind, payload, seq)
        elif kind in TOOL_CALL_KINDS:
            batch = payload.get("tool_calls")
            items = [x for x in batch if isinstance(x, dict)] if isinstance(batch, list) and batch else [payload]
            for item in items[:200]:
                _add_call(d, kind, item, at, cwd, text_of(ob.get("tool_name"), 80))
        elif kind is EventKind.STOP:
            if payload.get("error"):  # StopFailure: the turn died on an API error
                detail = one_line(payload.get("error_details"), 200)
                d.api_errors.append((at, one_line(payload.get("error"), 100) + (f" ({detail})" if detail else "")))
            else:
                d.replies.append((seq, text_of(first_of(payload, _REPLY_KEYS), 20_000).strip()))
        elif kind is EventKind.SESSION_END and (reply := text_of(first_of(payload, _REPLY_KEYS), 20_000).strip()):
            d.replies.append((seq, reply))  # an agent whose run ends with its reply (Cline's TaskComplete)
    return d


# ---------------------------------------------------------------- what the last reply leaves open


def _unique(items: list[str], limit: int) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.lower()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out[:limit]


def _open_questions(d: _Digest) -> list[str]:
    """Questions in the last reply, and in the prompts after it that got no reply."""
    last_seq, last_reply = d.replies[-1] if d.replies else (-1, "")
    found = reply_items.questions(last_reply)
    unanswered = [text for seq, _, text in d.prompts if seq > last_seq][-3:]
    for text in unanswered:
        found += reply_items.questions(text)
    if unanswered and not reply_items.questions(unanswered[-1]):
        found.append(f"No reply recorded to the last prompt: {one_line(unanswered[-1], 200)}")
    return _unique(found, HANDOFF_ITEMS)


# ---------------------------------------------------------------- title, summary, entities


def _title(prompts: list[tuple[int, str, str]], short_id: str) -> str:
    """The first real prompt's first line (not a slash-command wrapper or a caveat)."""
    for _, _, text in prompts:
        first = next((x.strip() for x in text.splitlines() if x.strip()), "")
        if first and not first.startswith(_SCAFFOLD):
            title = clip(collapsed(first.lstrip("#> \t")).rstrip(".:;,"), TITLE_CHARS)
            if title:
                return title
    return f"Session {short_id}"


def _first_sentence(text: str) -> str:
    return next((clip(s, 200) for s in reply_items.sentences(text)), "")


def _summary(title: str, has_prompt: bool, reply: str, stats: str) -> str:
    lead = (title if title.endswith((".", "?", "!", "…")) else title + ".") if has_prompt else ""
    return clip(f"{lead} {_first_sentence(reply) or stats}".strip(), SUMMARY_CHARS)


def _ends(items: list[T], n: int) -> list[T]:
    return items if len(items) <= 2 * n else items[:n] + items[-n:]


def _entities(title: str, d: _Digest, files: list[str], commands: list[str]) -> list[str]:
    """Entities ranked by how many prompts, replies, files and commands name them, then first seen."""
    rank: dict[str, list[Any]] = {}  # key -> [count, first seen, as written]
    chunks = [title] + [text for _, _, text in _ends(d.prompts, 50)] + [text for _, text in d.replies[-3:]]
    found = [extract_entities(text_of(c, 4000)) for c in chunks + _ends(commands, 50)]
    for names in found[: len(chunks)] + [[f] for f in files] + found[len(chunks):]:
        for name in names:
            entry = rank.setdefault(normalize_entity(name), [0, len(rank), name])
            entry[0] += 1
    ordered = sorted(rank.values(), key=lambda e: (-e[0], e[1]))
    return [e[2] for e in ordered[:PAGE_ENTITIES] if e[2]]


# ---------------------------------------------------------------- rendering


def _trim(items: list[str], cap: int) -> list[str]:
    """At most cap items: the first and the last ones, with a line saying how many are left out."""
    if len(items) <= cap:
        return items
    tail = cap // 2
    return items[: cap - tail] + [f"- … {len(items) - cap} more"] + (items[-tail:] if tail else [])


_SECTIONS = (("prompts", "Prompts"), ("files", "Files touched"), ("commands", "Commands run"),
             ("errors", "Errors and failures"), ("questions", "Open questions"), ("steps", "Next steps"))


def _body(title: str, summary_lines: list[str], lists: dict[str, list[str]], scale: float) -> str:
    parts = [f"# {title}\n", "## Summary\n", "\n".join(summary_lines) + "\n"]
    for key, heading in _SECTIONS:
        items = _trim(lists[key], max(2, int(_LIST_CAPS[key] * scale)))
        parts += [f"## {heading}\n", ("\n".join(items) if items else "_None._") + "\n"]
    return "\n".join(parts)


def _fit(head: str, title: str, summary_lines: list[str], lists: dict[str, list[str]]) -> str:
    """The page text, with long lists halved until it fits in MAX_PAGE_BYTES."""
    scale = 1.0
    while True:
        text = f"---\n{head}---\n\n" + _body(title, summary_lines, lists, scale)
        if len(text.encode("utf-8")) <= MAX_PAGE_BYTES or scale < 0.01:
            return text
        scale /= 2


def _when(created: str | None, updated: str | None) -> str:
    if not created or not updated:
        return "- When: unknown"
    end = updated[11:16] if updated[:10] == created[:10] else f"{updated[:10]} {updated[11:16]}"
    return f"- When: {created[:10]} {created[11:16]} → {end} UTC ({_minutes(created, updated)} min)"


# ---------------------------------------------------------------- the page


@dataclass(frozen=True)
class _Who:
    session_id: str
    short_id: str
    agent: str
    cwd: str | None
    project: str
    created: str | None
    updated: str | None


def _top(counter: Counter[str]) -> str | None:
    return counter.most_common(1)[0][0] if counter else None


def _who(d: _Digest, project: str | None) -> _Who:
    session_id = _top(d.counts["session_id"]) or ""
    agent = _top(d.counts["agent"]) or "unknown"
    name = (project_name(project) if isinstance(project, str) else None) or project_name(_top(d.counts["project"]))
    created, updated = (min(d.stamps), max(d.stamps)) if d.stamps else (None, None)
    return _Who(session_id=session_id, short_id=safe_name(session_id)[:8].strip("-.") or "session",
                agent=agent, cwd=_top(d.counts["cwd"]), project=name or UNSORTED,
                created=created, updated=updated)


def _summary_lines(d: _Digest, who: _Who, failures: int, reply: str) -> list[str]:
    lines = [f"- Agent: {who.agent}", _when(who.created, who.updated),
             f"- Prompts: {len(d.prompts)} · Tool calls: {len(d.calls)} · Failures: {failures}"]
    if d.prompts:
        lines.append(f"- First prompt: {one_line(d.prompts[0][2], 500)}")
    if len(d.prompts) > 1:
        lines.append(f"- Last prompt: {one_line(d.prompts[-1][2], 500)}")
    if d.memory_calls:
        lines.append("- Used memory: " + ", ".join(f"{tool} ×{len(calls)}" for tool, calls in sorted(d.memory_calls.items())))
    return lines + ([f"- Last reply: {one_line(reply, 500)}"] if reply else [])


def _hhmm(at: str) -> str:
    return at[11:16] or "--:--"


def _file_line(path: str, actions: dict[str, int]) -> str:
    return f"- {code_span(path)}: " + ", ".join(a + (f" ×{n}" if n > 1 else "") for a, n in actions.items())


def _rows(observations: Any) -> list[Any]:
    try:
        return [] if isinstance(observations, (str, bytes, dict)) else list(observations)
    except TypeError:  # not iterable
        return []


def compile_session(observations: list[dict[str, Any]], *, project: str | None = None) -> SessionPage | None:
    """The session page and handoff; None when the session has no prompt and no tool use."""
    d = _digest(_rows(observations))
    if not d.prompts and not d.calls:
        return None
    who = _who(d, project)
    files, commands, errors, todos, failures = tool_lists(d.calls, d.api_errors)
    changed = [p for p, actions in files.items() if set(actions) - {"read"}]
    listed = (changed + [p for p in files if p not in changed])[:LISTED_FILES]
    title = _title(d.prompts, who.short_id)
    reply = next((text for _, text in reversed(d.replies) if text), "")
    stats = (f"{len(d.prompts)} prompts, {len(d.calls)} tool calls ({failures} failed), "
             f"{len(changed)} files changed over {_minutes(who.created or '', who.updated or '')} min.")
    summary = _summary(title, bool(d.prompts), reply, stats)
    questions = _open_questions(d)
    steps = _unique(reply_items.next_steps(d.replies[-1][1] if d.replies else "") + todos, HANDOFF_ITEMS)
    entities = _entities(title, d, list(files), [command for _, command, _ in commands])
    frontmatter = {
        "type": "Session Summary", "title": title, "tier": "episodic", "project": who.project,
        "created": who.created, "updated": who.updated, "session_id": who.session_id, "agent": who.agent,
        "cwd": who.cwd, "tags": ["session", who.agent], "entities": entities, "summary": summary,
        "files_touched": listed,
    }
    lists = {"prompts": [f"- {_hhmm(at)} {one_line(text, 500)}" for _, at, text in d.prompts],
             "files": [_file_line(path, actions) for path, actions in files.items()],
             "commands": [f"- {_hhmm(at)} {code_span(c)}" + (f": {status}" if status else "")
                          for at, c, status in commands],
             "errors": [f"- {_hhmm(at)} {line}" for at, line in errors],
             "questions": [f"- {q}" for q in questions], "steps": [f"- {s}" for s in steps]}
    head = yaml.safe_dump(frontmatter, sort_keys=False, allow_unicode=True, width=1000)
    text = _fit(head, title, _summary_lines(d, who, failures, reply), lists)
    handoff = {
        "session_id": who.session_id, "project": who.project, "cwd": who.cwd, "from_agent": who.agent,
        "summary": summary, "open_questions": questions, "files_touched": listed, "next_steps": steps,
        "created_at": who.updated,
    }
    path = f"{who.project}/sessions/{(who.created or 'undated')[:10]}-{who.short_id}.md"
    return SessionPage(path=path, text=text, frontmatter=frontmatter, handoff=handoff, entities=entities)
