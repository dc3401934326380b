"""Session pages by rules: a session's observations become a markdown page and a handoff.

``compile_session`` reads the observation dicts the store returns (``session_observations``)
and writes down what a person picking the work up would ask: what was asked, which files
were read or changed, which commands ran and failed, what is still open, what comes next.
No model, no clock, no I/O: the same observations always give byte-identical text. A tool
call's Pre and Post events count once (matched by tool_use_id, else by tool and input); file
paths are shown relative to the call's cwd. Payloads are read defensively (no shape or size
raises) and the page stays under 64 KiB by keeping the first and last items of long lists.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from ai_memory.core.entities import extract_entities, normalize_entity
from ai_memory.core.events import EventKind, normalize_event
from ai_memory.core.names import UNSORTED, project_name, safe_name

__all__ = ["MAX_PAGE_BYTES", "SessionPage", "compile_session"]

MAX_PAGE_BYTES = 64 * 1024
TITLE_CHARS = 80
SUMMARY_CHARS = 300
LISTED_FILES = 50  # files in the frontmatter and the handoff
HANDOFF_ITEMS = 20  # open questions and next steps
PAGE_ENTITIES = 30
# Body list lengths before the page has to shrink (then all of them halve until it fits).
_LIST_CAPS = {"prompts": 100, "files": 200, "commands": 150, "errors": 60, "questions": 20, "steps": 20}

_TOOL_KINDS = (EventKind.PRE_TOOL_USE, EventKind.POST_TOOL_USE, EventKind.TOOL_FAILURE)
_READ = {"read", "read_file", "read_many_files", "notebookread", "view", "view_file"}
_EDIT = {"edit", "multiedit", "replace", "edit_file", "str_replace", "str_replace_editor", "apply_patch"}
_WRITE = {"write", "write_file", "notebookedit", "create_file"}
_SHELL = {"bash", "run_shell_command", "shell", "exec_command", "local_shell", "run_terminal_cmd",
          "execute_command", "terminal"}
_PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "absolute_path", "target_file", "filename")
_REPLY_KEYS = ("last_assistant_message", "lastAssistantMessage", "prompt_response", "last-assistant-message")
_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exit_status")

_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_SPACE = re.compile(r"\s+")
_EXIT_LINE = re.compile(r"^\s*exit[ _-]?(?:code|status)\s*[:=]?\s*(-?\d{1,3})\s*$"
                        r"|exited with (?:code|status) (-?\d{1,3})\b", re.I | re.M)
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_PATCH_ACTION = {"Update": "edited", "Add": "written", "Delete": "deleted", None: "written"}
_NOISE = re.compile(r"(?:exit[ _-]?code|wall time|signal|error|process group pgid|background pids)\s*:?\s*"
                    r"(?:\(none\)|-?\d|$)", re.I)
_TODO = re.compile(r"\b(?:TODO|FIXME)\b")
_COMMENT = re.compile(r"^[\s#/*<!;>\"'-]+|[\s*/>-]+$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_STEP_LABEL = re.compile(r"^(?:#+\s*)?(?:\*\*|__)?(?:next steps?|todos?|to-dos?|still to do|follow[- ]ups?"
                         r"|remaining(?: work| steps| tasks| items)?)(?:\*\*|__)?\s*(?::|$)(?:\*\*|__)?\s*(.*)$", re.I)
_STEP_SENTENCE = re.compile(r"^(?:next\b(?!\.\w)|todo\s*[:(]|fixme\b|still to do\b|remaining\s*:)", re.I)
_LIST_HEADER = re.compile(r"(?:next steps?|todo|to-do|remain|still to do|left to do|follow[- ]up)[^:]{0,60}:\s*$",
                          re.I)
_SCAFFOLD = ("<", "Caveat:", "[Request interrupted")


@dataclass(frozen=True)
class SessionPage:
    """A compiled session: the page file (path relative to the wiki dir, text) and its handoff."""

    path: str  # "<project>/sessions/<YYYY-MM-DD>-<short-id>.md"
    text: str  # the whole markdown file: YAML frontmatter + body
    frontmatter: dict
    handoff: dict  # session_id, project, cwd, from_agent, summary, open_questions, files_touched,
    #                next_steps, created_at
    entities: list[str]


@dataclass
class _Call:
    """One tool call, its Pre and Post/Failure events merged."""

    name: str
    tool_input: Any
    at: str
    cwd: str
    response: Any = None
    error: str = ""
    failed: bool = False
    interrupted: bool = False


@dataclass
class _Digest:
    """What the observations say, gathered in one pass."""

    prompts: list[tuple[int, str, str]] = field(default_factory=list)  # (seq, at, text)
    replies: list[tuple[int, str]] = field(default_factory=list)  # (seq, text) of main-agent stops
    calls: list[_Call] = field(default_factory=list)
    api_errors: list[tuple[str, str]] = field(default_factory=list)  # (at, text)
    pending: dict[Any, list[_Call]] = field(default_factory=dict)
    stamps: list[str] = field(default_factory=list)
    counts: dict[str, Counter] = field(  # most common wins: session_id, agent, project, cwd
        default_factory=lambda: {k: Counter() for k in ("session_id", "agent", "project", "cwd")})


# ---------------------------------------------------------------- small readers


def _text(value: Any, limit: int = 200_000) -> str:
    if isinstance(value, str):
        return _CONTROL.sub("", value[:limit])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.6 else cut).rstrip(" ,;:") + "…"


def _line(value: Any, limit: int) -> str:
    """One line: whitespace collapsed, clipped at a word."""
    return _clip(_SPACE.sub(" ", _text(value, limit * 4 + 256)).strip(), limit)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _first(d: dict, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if d.get(key) not in (None, ""):
            return d[key]
    return None


def _code(text: str) -> str:
    """An inline code span that survives backticks in the text."""
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if len(fence) > 1 else f"`{text}`"


def _minutes(start: str, end: str) -> int:
    try:
        a = datetime.fromisoformat(start.replace("Z", "+00:00"))
        return max(0, round((datetime.fromisoformat(end.replace("Z", "+00:00")) - a).total_seconds() / 60))
    except (ValueError, TypeError):  # unparseable, or naive against aware
        return 0


def _kind(ob: dict, payload: dict) -> EventKind:
    try:
        return EventKind(ob.get("event"))
    except (ValueError, TypeError):
        return normalize_event(_text(ob.get("source_event") or payload.get("hook_event_name"), 200))


# ---------------------------------------------------------------- one pass over the events


def _prompt_text(payload: dict, ob: dict) -> str:
    value = _first(payload, ("prompt", "message", "text"))
    if isinstance(value, list):  # content blocks
        value = "\n".join(_text(b.get("text") if isinstance(b, dict) else b) for b in value[:50])
    return (_text(value) or _text(ob.get("body"))).strip()


def _fingerprint(name: str, tool_input: Any) -> Any:
    try:
        return name, json.dumps(tool_input, sort_keys=True, default=str)[:400]
    except (TypeError, ValueError, RecursionError):
        return name, ""


def _add_call(d: _Digest, kind: EventKind, item: dict, at: str, cwd: str, default_name: str) -> None:
    """Merge a Pre with its Post/Failure: by tool_use_id, else by tool name and input."""
    name = _line(item.get("tool_name") or item.get("toolName") or default_name, 80) or "tool"
    tool_input = item.get("tool_input", item.get("toolInput"))
    tid = _text(_first(item, ("tool_use_id", "toolUseId", "call_id")), 200)
    key = ("id", tid) if tid else _fingerprint(name, tool_input)
    waiting = d.pending.get(key, [])
    if kind is EventKind.PRE_TOOL_USE:
        if not (tid and waiting):  # a repeated Pre for one id is the same call
            call = _Call(name, tool_input, at, cwd)
            d.calls.append(call)
            d.pending.setdefault(key, []).append(call)
        return
    call = waiting.pop(0) if waiting else None
    if call is None:
        call = _Call(name, tool_input, at, cwd)
        d.calls.append(call)
    call.response = item.get("tool_response", item.get("tool_output", item.get("result")))
    error = item.get("error") or _dict(call.response).get("error")
    call.error = _error_text(error)
    call.failed = kind is EventKind.TOOL_FAILURE or bool(error)
    call.interrupted = item.get("is_interrupt") is True or _dict(call.response).get("interrupted") is True


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        error = _first(error, ("message", "error", "details")) or json.dumps(error, default=str)[:2000]
    if isinstance(error, list):
        error = "; ".join(_text(e) for e in error[:5])
    return _text(error, 4000).strip()


def _digest(observations: list[Any]) -> _Digest:
    d = _Digest()
    for seq, ob in enumerate(observations):
        if not isinstance(ob, dict):
            continue
        payload = _dict(ob.get("payload"))
        at = ob.get("occurred_at") if isinstance(ob.get("occurred_at"), str) else ""
        at = at if _STAMP.match(at) else ""
        if at:
            d.stamps.append(at)
        for key, counter in d.counts.items():
            if (value := _line(ob.get(key), 4096)):
                counter[value] += 1
        kind = _kind(ob, payload)
        cwd = _text(ob.get("cwd"), 4096)
        if kind is EventKind.USER_PROMPT and (text := _prompt_text(payload, ob)):
            d.prompts.append((seq, at, text))
        elif kind in _TOOL_KINDS:
            batch = payload.get("tool_calls")
            items = [x for x in batch if isinstance(x, dict)] if isinstance(batch, list) and batch else [payload]
            for item in items[:200]:
                _add_call(d, kind, item, at, cwd, _text(ob.get("tool_name"), 80))
        elif kind is EventKind.STOP:
            if payload.get("error"):  # StopFailure: the turn died on an API error
                detail = _line(payload.get("error_details"), 200)
                d.api_errors.append((at, _line(payload.get("error"), 100) + (f" ({detail})" if detail else "")))
            else:
                d.replies.append((seq, _text(_first(payload, _REPLY_KEYS), 20_000).strip()))
    return d


# ---------------------------------------------------------------- tool calls: files, commands, failures


def _exit_code(call: _Call) -> int | None:
    resp = call.response
    for holder in (resp, _dict(resp).get("metadata")):
        for key in _EXIT_KEYS if isinstance(holder, dict) else ():
            value = holder.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,3}\s*", value):
                return int(value)
    texts = [resp] if isinstance(resp, str) else [_dict(resp).get(k) for k in ("output", "llmContent", "content")]
    for text in [*texts, call.error]:
        if isinstance(text, str) and (m := _EXIT_LINE.search(text[:8192])):
            return int(m.group(1) or m.group(2))
    return None


def _outcome(call: _Call) -> tuple[bool, str]:
    """(failed, label): the label is "exit N", "interrupted" or "" when nothing says."""
    code = _exit_code(call)
    resp = _dict(call.response)
    failed = (call.failed or call.interrupted or resp.get("is_error") is True or resp.get("isError") is True
              or code not in (None, 0))
    return failed, "interrupted" if call.interrupted else (f"exit {code}" if code is not None else "")


def _is_shell(name: str) -> bool:
    low = name.lower()
    return low in _SHELL or "shell" in low


def _command(tool_input: Any) -> str:
    value = _first(tool_input, ("command", "cmd", "script")) if isinstance(tool_input, dict) else tool_input
    if isinstance(value, list):
        value = " ".join(_text(x, 20_000) for x in value[:50])
    lines = [x.strip() for x in _text(value, 20_000).splitlines() if x.strip()]
    return (_clip(lines[0], 200) + (" …" if len(lines) > 1 else "")) if lines else ""


def _patch_text(tool_input: Any) -> str:
    value = _first(tool_input, ("command", "patch", "input")) if isinstance(tool_input, dict) else tool_input
    if isinstance(value, list):
        value = "\n".join(_text(x) for x in value[:50])
    return _text(value)


def _patch_of(call: _Call) -> str | None:
    """The patch text of an apply_patch call (or of a shell call running one), else None."""
    low = call.name.lower()
    if low != "apply_patch" and not _is_shell(call.name):
        return None
    patch = _patch_text(call.tool_input)
    return patch if low == "apply_patch" or _PATCH_FILE.search(patch) else None


def _touches(call: _Call) -> list[tuple[str, str]]:
    """(path as written, action) for each file the call read or changed."""
    if (patch := _patch_of(call)) is not None:
        found = [(m.group(2) or m.group(3), _PATCH_ACTION[m.group(1)]) for m in _PATCH_FILE.finditer(patch)]
        return found[:200]
    low = call.name.lower()
    action = "read" if low in _READ else "edited" if low in _EDIT else "written" if low in _WRITE else ""
    tool_input = _dict(call.tool_input)
    paths = [_first(tool_input, _PATH_KEYS)]
    if isinstance(tool_input.get("paths"), list):
        paths += tool_input["paths"][:200]
    return [(p, action) for p in paths if action and isinstance(p, str) and p.strip()]


def _rel(path: str, cwd: str) -> str:
    """The path relative to the call's cwd when inside it; a very long one keeps both ends."""
    path = _SPACE.sub(" ", _text(path, 100_000)).strip()
    root = cwd.rstrip("/")
    if root and path.startswith(root + "/"):
        path = path[len(root) + 1:]
    path = path.removeprefix("./")
    return path if len(path) <= 512 else f"{path[:200]}…{path[-311:]}"


def _todos(call: _Call, touches: list[tuple[str, str]]) -> list[str]:
    """TODO/FIXME lines in what an edit or write put into a file."""
    if not touches or all(action in ("read", "deleted") for _, action in touches):
        return []
    found, path = [], touches[0][0]
    if (patch := _patch_of(call)) is not None:
        lines = patch.splitlines()
    else:
        tool_input = _dict(call.tool_input)
        texts = [tool_input.get(k) for k in ("content", "new_string", "new_source", "text")]
        texts += [e.get("new_string") for e in tool_input.get("edits", [])[:100] if isinstance(e, dict)] \
            if isinstance(tool_input.get("edits"), list) else []
        lines = [f"+{x}" for t in texts for x in _text(t, 50_000).splitlines()]
    for line in lines[:5000]:
        if (m := _PATCH_FILE.match(line)) and (m.group(2) or m.group(3)):
            path = _rel(m.group(2) or m.group(3), call.cwd)
        elif line.startswith("+") and not line.startswith("+++") and (m := _TODO.search(line)):
            found.append(f"{path}: {_line(_COMMENT.sub('', line[m.start():]), 160)}")
    return found[:5]


def _output_tail(response: Any) -> str:
    """The last telling line of a failed command's output (stderr first)."""
    resp = _dict(response)
    for value in (resp.get("stderr"), response, resp.get("output"), resp.get("returnDisplay")):
        lines = [x.strip() for x in _text(value, 20_000).splitlines()]
        lines = [x for x in lines if x and not _NOISE.match(x)]
        if lines:
            return _line(lines[-1], 200)
    return ""


def _failure_line(call: _Call, subject: str, label: str) -> str:
    what = "; ".join(x.strip() for x in call.error.splitlines() if x.strip()) or label or "failed"
    if not call.error and (tail := _output_tail(call.response)):
        what = f"{what}; {tail}"
    where = f" {_code(_clip(subject, 120))}" if subject else ""
    return f"{_line(call.name, 60)}{where}: {_clip(what, 300)}"


_Commands = list[tuple[str, str, str]]  # (occurred_at, command, status)
_Errors = list[tuple[str, str]]  # (occurred_at, markdown)


def _tool_lists(d: _Digest) -> tuple[dict[str, dict[str, int]], _Commands, _Errors, list[str], int]:
    """Files with their actions, commands, failures, TODOs written into files, and the failure count."""
    files: dict[str, dict[str, int]] = {}
    commands: _Commands = []
    errors: _Errors = []
    todos: list[str] = []
    failures = 0
    for call in d.calls:
        failed, label = _outcome(call)
        failures += failed
        touched = [(_rel(p, call.cwd), action) for p, action in _touches(call)]
        command = _command(call.tool_input) if _is_shell(call.name) else ""
        if command:
            status = f"**failed** ({label})" if failed and label else "**failed**" if failed else label
            commands.append((call.at, command, status))
        if failed:
            errors.append((call.at, _failure_line(call, command or (touched[0][0] if touched else ""), label)))
            continue
        for path, action in touched:
            actions = files.setdefault(path, {})
            actions[action] = actions.get(action, 0) + 1
        todos += _todos(call, touched)
    errors += [(at, f"API error: {text}") for at, text in d.api_errors]
    errors.sort(key=lambda e: e[0])
    return files, commands, errors, todos, failures


# ---------------------------------------------------------------- what the last reply leaves open


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    fenced = False
    for raw in text[:20_000].splitlines():
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        line = _BULLET.sub("", raw).strip().lstrip("#").strip()
        if line and not fenced:
            out += [s.strip() for s in _SENTENCE.split(line) if s.strip()]
    return out


def _questions(text: str) -> list[str]:
    return [_clip(s, 300) for s in _sentences(text) if len(s) > 3 and s.rstrip("*_\"')").endswith("?")]


def _next_steps(text: str) -> list[str]:
    """Items under a "Next steps"/"TODO"/"Remaining" label, unchecked boxes, "Next, ..." sentences."""
    steps: list[str] = []
    in_list = fenced = False
    for raw in text[:20_000].splitlines():
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        bullet = _BULLET.match(raw)
        body = raw[bullet.end():].strip() if bullet else raw.strip()
        if fenced or not body or re.match(r"\s*[-*+]\s+\[[xX]\]", raw):
            continue
        if re.match(r"\s*[-*+]\s+\[ \]", raw) or (bullet and in_list):
            steps.append(body)
        elif label := _STEP_LABEL.match(body):
            steps += [label.group(1)] if label.group(1).strip() else []
            in_list = True
        elif _LIST_HEADER.search(body):
            in_list = True
        else:
            in_list = False
            steps += [s for s in _SENTENCE.split(body) if _STEP_SENTENCE.match(s)]
    return [_clip(s.strip(), 300) for s in steps if s.strip()]


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
    found = _questions(last_reply)
    unanswered = [text for seq, _, text in d.prompts if seq > last_seq][-3:]
    for text in unanswered:
        found += _questions(text)
    if unanswered and not _questions(unanswered[-1]):
        found.append(f"No reply recorded to the last prompt: {_line(unanswered[-1], 200)}")
    return _unique(found, HANDOFF_ITEMS)


# ---------------------------------------------------------------- title, summary, entities


def _title(prompts: list[tuple[int, str, str]], short_id: str) -> str:
    """The first real prompt's first line (not a slash-command wrapper or a caveat)."""
    for _, _, text in prompts:
        first = next((x.strip() for x in text.splitlines() if x.strip()), "")
        if first and not first.startswith(_SCAFFOLD):
            title = _clip(_SPACE.sub(" ", first.lstrip("#> \t")).strip().rstrip(".:;,"), TITLE_CHARS)
            if title:
                return title
    return f"Session {short_id}"


def _first_sentence(text: str) -> str:
    return next((_clip(s, 200) for s in _sentences(text)), "")


def _summary(title: str, has_prompt: bool, reply: str, stats: str) -> str:
    lead = (title if title.endswith((".", "?", "!", "…")) else title + ".") if has_prompt else ""
    return _clip(f"{lead} {_first_sentence(reply) or stats}".strip(), SUMMARY_CHARS)


def _ends(items: list, n: int) -> list:
    return items if len(items) <= 2 * n else items[:n] + items[-n:]


def _entities(title: str, d: _Digest, files: list[str], commands: list[str]) -> list[str]:
    """Entities ranked by how many prompts, replies, files and commands name them, then first seen."""
    rank: dict[str, list] = {}  # key -> [count, first seen, as written]
    chunks = [title] + [text for _, _, text in _ends(d.prompts, 50)] + [text for _, text in d.replies[-3:]]
    found = [extract_entities(_text(c, 4000)) for c in chunks + _ends(commands, 50)]
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


def _top(counter: Counter) -> str | None:
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
        lines.append(f"- First prompt: {_line(d.prompts[0][2], 500)}")
    if len(d.prompts) > 1:
        lines.append(f"- Last prompt: {_line(d.prompts[-1][2], 500)}")
    return lines + ([f"- Last reply: {_line(reply, 500)}"] if reply else [])


def _hhmm(at: str) -> str:
    return at[11:16] or "--:--"


def _file_line(path: str, actions: dict[str, int]) -> str:
    return f"- {_code(path)}: " + ", ".join(a + (f" ×{n}" if n > 1 else "") for a, n in actions.items())


def _rows(observations: Any) -> list[Any]:
    try:
        return [] if isinstance(observations, (str, bytes, dict)) else list(observations)
    except TypeError:  # not iterable
        return []


def compile_session(observations: list[dict], *, project: str | None = None) -> SessionPage | None:
    """The session page and handoff; None when the session has no prompt and no tool use."""
    d = _digest(_rows(observations))
    if not d.prompts and not d.calls:
        return None
    who = _who(d, project)
    files, commands, errors, todos, failures = _tool_lists(d)
    changed = [p for p, actions in files.items() if set(actions) - {"read"}]
    listed = (changed + [p for p in files if p not in changed])[:LISTED_FILES]
    title = _title(d.prompts, who.short_id)
    reply = next((text for _, text in reversed(d.replies) if text), "")
    stats = (f"{len(d.prompts)} prompts, {len(d.calls)} tool calls ({failures} failed), "
             f"{len(changed)} files changed over {_minutes(who.created or '', who.updated or '')} min.")
    summary = _summary(title, bool(d.prompts), reply, stats)
    questions = _open_questions(d)
    steps = _unique(_next_steps(d.replies[-1][1] if d.replies else "") + todos, HANDOFF_ITEMS)
    entities = _entities(title, d, list(files), [command for _, command, _ in commands])
    frontmatter = {
        "type": "Session Summary", "title": title, "tier": "episodic", "project": who.project,
        "created": who.created, "updated": who.updated, "session_id": who.session_id, "agent": who.agent,
        "cwd": who.cwd, "tags": ["session", who.agent], "entities": entities, "summary": summary,
        "files_touched": listed,
    }
    lists = {"prompts": [f"- {_hhmm(at)} {_line(text, 500)}" for _, at, text in d.prompts],
             "files": [_file_line(path, actions) for path, actions in files.items()],
             "commands": [f"- {_hhmm(at)} {_code(c)}" + (f": {status}" if status else "")
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
