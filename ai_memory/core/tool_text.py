"""A tool event as searchable text: what the call was given and what it gave back, as readable
lines, never escaped JSON (in ``{"a": "x\\ny"}`` the words ``x`` and ``y`` would fuse into
``ny``), and an edit as the file with its old and new text.

Bounds (characters; the body as a whole is then capped by the sanitizer, 16 KiB): an edit or
a write keeps up to ``EDIT_CHARS`` of what it changed, which with the payload's own caps
(``old_string``/``new_string`` up to 16 KiB, the payload 16 KiB) keeps a hunk of a few
thousand lines' worth of code whole; its response (which for Claude Code repeats the strings
and holds the original file) is left out unless the call failed. Any other call keeps
``INPUT_CHARS`` of its input and ``RESULT_CHARS`` of its result; an error ``ERROR_CHARS``.
"""

from __future__ import annotations

import re
from typing import Any

from ai_memory.core.tool_calls import EDIT_TOOLS, NEW_TEXT_KEYS, OLD_TEXT_KEYS, WRITE_TOOLS, patch_in

__all__ = ["EDIT_CHARS", "edit_sides", "edit_of", "readable", "tool_body"]

EDIT_CHARS = 14_000
INPUT_CHARS = 2_000
RESULT_CHARS = 4_000
ERROR_CHARS = 2_000
_DEPTH = 6
_NOISE_KEYS = frozenset(("originalFile", "structuredPatch", "userModified", "replaceAll", "replace_all",
                         "interrupted", "isImage", "noOutputExpected"))


def readable(value: Any, limit: int) -> str:
    """The value as lines of text: a string as it is, a mapping as ``key: value`` lines (a
    multi-line value on the lines after its key), a list item by item; booleans, nulls and
    bookkeeping fields (an original file, a patch structure) left out. At most ``limit``
    characters, cut at a line where one is near."""
    lines: list[str] = []
    _walk(value, "", lines, 0)
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    newline = cut.rfind("\n")
    return cut[:newline] if newline > limit * 0.8 else cut


def _walk(value: Any, key: str, lines: list[str], depth: int) -> None:
    label = f"{key}: " if key else ""
    if isinstance(value, str):
        if value.strip():
            lines.append(f"{key}:\n{value}" if key and "\n" in value else f"{label}{value}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        lines.append(f"{label}{value}")
    elif isinstance(value, dict) and depth < _DEPTH:
        for k, v in value.items():
            if str(k) not in _NOISE_KEYS:
                _walk(v, str(k), lines, depth + 1)
    elif isinstance(value, list) and depth < _DEPTH:
        for item in value[:200]:
            _walk(item, key, lines, depth + 1)


def _changed(tool_input: Any) -> str:
    """What an edit or write put into a file: the path, then each old and new text."""
    if not isinstance(tool_input, dict):
        return readable(tool_input, EDIT_CHARS)
    path = next((tool_input[k] for k in ("file_path", "path", "notebook_path", "filePath")
                 if isinstance(tool_input.get(k), str)), "")
    listed = tool_input.get("edits")
    edits: list[Any] = listed if isinstance(listed, list) else [tool_input]
    parts = [f"file: {path}"] if path else []
    for edit in edits[:100]:
        if not isinstance(edit, dict):
            continue
        for keys, label in ((OLD_TEXT_KEYS, "old"), (NEW_TEXT_KEYS, "new")):
            for key in keys:
                if isinstance(edit.get(key), str) and edit[key].strip():
                    parts.append(f"--- {label}\n{edit[key]}")
        if patch := patch_in(edit):
            parts.append(f"--- patch\n{patch}")
    return readable("\n".join(parts), EDIT_CHARS)


def tool_body(tool: str, tool_input: Any, result: Any, error: Any, failed: bool = False) -> str:
    """The searchable body of a tool event (``failed``: it reported a failure)."""
    parts = [f"tool: {tool}"]
    if tool.lower() in EDIT_TOOLS | WRITE_TOOLS:
        parts.append(_changed(tool_input))
        if failed or error:  # the file was left as it was: ``edit_sides`` reads nothing changed
            parts.append(FAILED_MARK)
        if (failed or error) and result is not None:
            parts += ["---", readable(result, RESULT_CHARS)]
    else:
        parts.append(readable(tool_input, INPUT_CHARS))
        if result is not None:
            parts += ["---", readable(result, RESULT_CHARS)]
    if error:
        parts += ["error:", readable(error, ERROR_CHARS)]
    return "\n".join(x for x in parts if x)


# The marks ``_changed`` puts before an edit's parts. (The bare "---" before a failed call's
# result is not one: a YAML or markdown file holds such lines of its own.)
_PART = re.compile(r"^--- (old|new|patch)$", re.M)
FAILED_MARK = "--- failed"
_WHOLE_EDIT = EDIT_CHARS * 9 // 10  # a longer body may have been cut: its sides are not known


def edit_sides(body: str) -> tuple[str, str]:
    """What the edit or write a tool event's body records (``tool_body``) took out and put in:
    its old and new texts, a patch's "-" and "+" lines; two empty texts for any other body, a
    failed call's, or one near its bound. (A file whose own lines are exactly these marks is
    read as the marks say.)"""
    tool = body[len("tool: "):body.find("\n")] if body.startswith("tool: ") and "\n" in body else ""
    # A failed call changed nothing, and a body cut at its bound may have lost its new text.
    if tool.lower() not in EDIT_TOOLS | WRITE_TOOLS or f"\n{FAILED_MARK}\n" in body or len(body) > _WHOLE_EDIT:
        return "", ""
    old: list[str] = []
    new: list[str] = []
    parts = _PART.split(body)
    for label, text in zip(parts[1::2], (part.strip("\n") for part in parts[2::2])):
        if label == "old":
            old.append(text)
        elif label == "new":
            new.append(text)
        elif label == "patch":
            lines = text.splitlines()
            old += [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
            new += [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    return "\n".join(old), "\n".join(new)


def edit_of(body: str) -> tuple[str, str] | None:
    """The file an edit or write's body (``tool_body``) names and what follows that line (the
    change); None for any other body."""
    head, _, rest = body.partition("\n")
    if not head.startswith("tool: ") or head[len("tool: "):].lower() not in EDIT_TOOLS | WRITE_TOOLS:
        return None
    line, _, change = rest.partition("\n")
    file = line[len("file: "):].strip() if line.startswith("file: ") else ""
    return (file, change) if file else None
