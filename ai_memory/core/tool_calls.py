"""Tool calls, read by rules: which files a call read or changed, which command it ran, whether
it failed and why, and the TODOs it wrote into files.

Agents name their tools differently (Claude Code's Edit, Gemini's replace, Codex's apply_patch
and shell); the sets below map them onto read, edited and written. A call's exit code is
looked for in the response's fields, then in its text. Nothing here raises on odd shapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ai_memory.core.payload_text import as_dict, clip, code_span, collapsed, first_of, one_line, text_of

__all__ = ["EDIT_TOOLS", "NEW_TEXT_KEYS", "OLD_TEXT_KEYS", "PATCH_KEYS", "WRITE_TOOLS", "Commands", "Errors",
           "ToolCall", "action_of", "is_shell", "patch_in", "relative_path", "tool_lists"]

_READ = {"read", "read_file", "read_many_files", "notebookread", "view", "view_file"}
EDIT_TOOLS = {"edit", "multiedit", "replace", "edit_file", "str_replace", "str_replace_editor", "apply_patch"}
WRITE_TOOLS = {"write", "write_file", "notebookedit", "create_file"}
# Where an edit's input holds the text it replaced, the text it put in, or a patch of both, in
# the agents' shapes (Claude Code, the text editor tool, notebooks, Codex's apply_patch, OpenCode).
OLD_TEXT_KEYS = ("old_string", "old_str", "oldString")
NEW_TEXT_KEYS = ("new_string", "new_str", "new_source", "content", "file_text", "newString")
PATCH_KEYS = ("patch", "command", "input")
_SHELL = {"bash", "run_shell_command", "shell", "exec_command", "local_shell", "run_terminal_cmd",
          "execute_command", "terminal", "run_commands"}
_PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "absolute_path", "target_file", "filename")
_EXIT_KEYS = ("exit_code", "exitCode", "returncode", "return_code", "exit_status")
_EXIT_LINE = re.compile(r"^\s*exit[ _-]?(?:code|status)\s*[:=]?\s*(-?\d{1,3})\s*$"
                        r"|exited with (?:code|status) (-?\d{1,3})\b", re.I | re.M)
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_PATCH_ACTION = {"Update": "edited", "Add": "written", "Delete": "deleted", None: "written"}
_NOISE = re.compile(r"(?:exit[ _-]?code|wall time|signal|error|process group pgid|background pids)\s*:?\s*"
                    r"(?:\(none\)|-?\d|$)", re.I)
_TODO = re.compile(r"\b(?:TODO|FIXME)\b")
_COMMENT = re.compile(r"^[\s#/*<!;>\"'-]+|[\s*/>-]+$")


@dataclass
class ToolCall:
    """One tool call, its Pre and Post/Failure events merged."""

    name: str
    tool_input: Any
    at: str
    cwd: str
    response: Any = None
    error: str = ""
    failed: bool = False
    interrupted: bool = False


def _exit_code(call: ToolCall) -> int | None:
    resp = call.response
    for holder in (as_dict(resp), as_dict(as_dict(resp).get("metadata"))):
        for key in _EXIT_KEYS:
            value = holder.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,3}\s*", value):
                return int(value)
    texts = [resp] if isinstance(resp, str) else [as_dict(resp).get(k) for k in ("output", "llmContent", "content")]
    for text in [*texts, call.error]:
        if isinstance(text, str) and (m := _EXIT_LINE.search(text[:8192])):
            return int(m.group(1) or m.group(2))
    return None


def _outcome(call: ToolCall) -> tuple[bool, str]:
    """(failed, label): the label is "exit N", "interrupted" or "" when nothing says."""
    code = _exit_code(call)
    resp = as_dict(call.response)
    failed = (call.failed or call.interrupted or resp.get("is_error") is True or resp.get("isError") is True
              or code not in (None, 0))
    return failed, "interrupted" if call.interrupted else (f"exit {code}" if code is not None else "")


def is_shell(name: str) -> bool:
    low = name.lower()
    return low in _SHELL or "shell" in low


def _command(tool_input: Any) -> str:
    value = first_of(tool_input, ("command", "cmd", "script", "commands")) if isinstance(tool_input, dict) else tool_input
    if isinstance(value, list):
        value = " ".join(text_of(x, 20_000) for x in value[:50])
    lines = [x.strip() for x in text_of(value, 20_000).splitlines() if x.strip()]
    return (clip(lines[0], 200) + (" …" if len(lines) > 1 else "")) if lines else ""


def patch_in(edit: dict[str, Any]) -> str:
    """The patch an edit's input holds under PATCH_KEYS, or "": a value that spans lines. (The
    text editor tool's "command" is its one-word sub-command, "str_replace" or "view".)"""
    return next((v for k in PATCH_KEYS if isinstance(v := edit.get(k), str) and "\n" in v.strip()), "")


def _patch_text(tool_input: Any) -> str:
    value = first_of(tool_input, PATCH_KEYS) if isinstance(tool_input, dict) else tool_input
    if isinstance(value, list):
        value = "\n".join(text_of(x) for x in value[:50])
    return text_of(value)


def _patch_of(call: ToolCall) -> str | None:
    """The patch text of an apply_patch call (or of a shell call running one), else None."""
    low = call.name.lower()
    if low != "apply_patch" and not is_shell(call.name):
        return None
    patch = _patch_text(call.tool_input)
    return patch if low == "apply_patch" or _PATCH_FILE.search(patch) else None


def _touches(call: ToolCall) -> list[tuple[str, str]]:
    """(path as written, action) for each file the call read or changed."""
    if (patch := _patch_of(call)) is not None:
        found = [(m.group(2) or m.group(3), _PATCH_ACTION[m.group(1)]) for m in _PATCH_FILE.finditer(patch)]
        return found[:200]
    action = action_of(call.name)
    tool_input = as_dict(call.tool_input)
    paths = [first_of(tool_input, _PATH_KEYS)]
    if isinstance(tool_input.get("paths"), list):
        paths += tool_input["paths"][:200]
    return [(p, action) for p in paths if action and isinstance(p, str) and p.strip()]


def action_of(tool_name: str) -> str:
    """What a tool does to the files it names: read, edited or written; "" for any other tool."""
    low = tool_name.lower()
    return "read" if low in _READ else "edited" if low in EDIT_TOOLS else "written" if low in WRITE_TOOLS else ""


def relative_path(path: str, cwd: str) -> str:
    """The path relative to the call's cwd when inside it; a very long one keeps both ends."""
    path = collapsed(text_of(path, 100_000))
    root = cwd.rstrip("/")
    if root and path.startswith(root + "/"):
        path = path[len(root) + 1:]
    path = path.removeprefix("./")
    return path if len(path) <= 512 else f"{path[:200]}…{path[-311:]}"


def _todos(call: ToolCall, touches: list[tuple[str, str]]) -> list[str]:
    """TODO/FIXME lines in what an edit or write put into a file."""
    if not touches or all(action in ("read", "deleted") for _, action in touches):
        return []
    found, path = [], touches[0][0]
    if (patch := _patch_of(call)) is not None:
        lines = patch.splitlines()
    else:
        tool_input = as_dict(call.tool_input)
        texts = [tool_input.get(k) for k in ("content", "new_string", "new_source", "text")]
        texts += [e.get("new_string") for e in tool_input.get("edits", [])[:100] if isinstance(e, dict)] \
            if isinstance(tool_input.get("edits"), list) else []
        lines = [f"+{x}" for t in texts for x in text_of(t, 50_000).splitlines()]
    for line in lines[:5000]:
        if (m := _PATCH_FILE.match(line)) and (m.group(2) or m.group(3)):
            path = relative_path(m.group(2) or m.group(3), call.cwd)
        elif line.startswith("+") and not line.startswith("+++") and (m := _TODO.search(line)):
            found.append(f"{path}: {one_line(_COMMENT.sub('', line[m.start():]), 160)}")
    return found[:5]


def _output_tail(response: Any) -> str:
    """The last telling line of a failed command's output (stderr first)."""
    resp = as_dict(response)
    for value in (resp.get("stderr"), response, resp.get("output"), resp.get("returnDisplay")):
        lines = [x.strip() for x in text_of(value, 20_000).splitlines()]
        lines = [x for x in lines if x and not _NOISE.match(x)]
        if lines:
            return one_line(lines[-1], 200)
    return ""


def _failure_line(call: ToolCall, subject: str, label: str) -> str:
    what = "; ".join(x.strip() for x in call.error.splitlines() if x.strip()) or label or "failed"
    if not call.error and (tail := _output_tail(call.response)):
        what = f"{what}; {tail}"
    where = f" {code_span(clip(subject, 120))}" if subject else ""
    return f"{one_line(call.name, 60)}{where}: {clip(what, 300)}"


Commands = list[tuple[str, str, str]]  # (occurred_at, command, status)
Errors = list[tuple[str, str]]  # (occurred_at, markdown)


def tool_lists(calls: list[ToolCall], api_errors: list[tuple[str, str]]
               ) -> tuple[dict[str, dict[str, int]], Commands, Errors, list[str], int]:
    """Files with their actions, commands, failures, TODOs written into files, and the failure count."""
    files: dict[str, dict[str, int]] = {}
    commands: Commands = []
    errors: Errors = []
    todos: list[str] = []
    failures = 0
    for call in calls:
        failed, label = _outcome(call)
        failures += failed
        touched = [(relative_path(p, call.cwd), action) for p, action in _touches(call)]
        command = _command(call.tool_input) if is_shell(call.name) else ""
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
    errors += [(at, f"API error: {text}") for at, text in api_errors]
    errors.sort(key=lambda e: e[0])
    return files, commands, errors, todos, failures
