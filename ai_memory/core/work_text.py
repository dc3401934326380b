"""What a session did, as text a language model can read: the parts of edits and tool results
that carry meaning, for embedding (words and code are matched lexically elsewhere).

An edit says what it means in a few places: the names it adds or changes (``def
update_query``, ``class Query``), the lines around them, its comments and docstrings, the
messages of the errors it raises. ``edit_passages`` keeps those, with each identifier also
spelled as words (``update_query`` as "update query": the model's vocabulary knows the
words, not the name), and leaves out what only repeats (lines the edit kept as they were,
import lists, bare punctuation). A tool's output means something mostly where it failed:
``failure_passages`` keeps its error lines (a traceback's last lines, ``Error:``, ``FAILED``)
with the command that printed them. Long texts come back as passages of at most
``PASSAGE_WORDS`` words, so none of a long edit is lost to the model's 256-piece window.
"""

from __future__ import annotations

import re
from typing import Any

from ai_memory.core.tool_calls import EDIT_TOOLS, NEW_TEXT_KEYS, OLD_TEXT_KEYS, WRITE_TOOLS, is_shell, patch_in
from ai_memory.core.tool_text import RESULT_CHARS, readable

__all__ = ["PASSAGE_WORDS", "edit_passages", "edits_of", "failure_passages", "tool_passages"]

PASSAGE_WORDS = 120
MAX_PASSAGES = 8
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_DEFINES = re.compile(r"^\s*(?:async\s+def|def|class|function|fn|func|interface|type|struct|enum|const|let|var)\s")
_COMMENT = re.compile(r"(?:^|\s)(?:#|//|--|/\*+|\*)\s*(.+?)\s*(?:\*/)?$")
_STRING = re.compile(r"""(?:"([^"\\\n]{8,})"|'([^'\\\n]{8,})')""")
_TRIVIAL = re.compile(r"^[\s\[\](){},;:.'\"`]*$|^\s*(?:from\s+\S+\s+)?import\s")
_ERROR_LINE = re.compile(r"\b(?:\w*Error|\w*Exception|Traceback|FAILED|FAIL|failed|fatal|panic|"
                         r"error(?:\[\w+\])?:|assert(?:ion)?)\b")


def _spelled(name: str) -> str:
    """An identifier as the words it is made of: ``update_query`` → "update query"."""
    return " ".join(p.lower() for p in _SPLIT.findall(name))


_COMPOUND = re.compile(r"[A-Za-z0-9]_+[A-Za-z]|[a-z]{2}[A-Z]|[A-Z]{2}[a-z]{2}")


def _readable(line: str) -> str:
    """A code line with each compound identifier (snake_case, camelCase) followed by its words."""
    def spell(m: re.Match[str]) -> str:
        name = m.group(0)
        return f"{name} ({_spelled(name)})" if _COMPOUND.search(name) else name
    return _IDENT.sub(spell, line.strip())


def _passages(head: str, lines: list[str]) -> list[str]:
    """Lines packed into passages of at most PASSAGE_WORDS words, each led by ``head``."""
    out: list[str] = []
    current: list[str] = []
    words = 0
    for line in lines:
        n = len(line.split())
        if current and words + n > PASSAGE_WORDS:
            out.append(f"{head}\n" + "\n".join(current))
            current, words = [], 0
        current.append(" ".join(line.split()[:PASSAGE_WORDS]))
        words += min(n, PASSAGE_WORDS)
        if len(out) >= MAX_PASSAGES:
            break
    if current and len(out) < MAX_PASSAGES:
        out.append(f"{head}\n" + "\n".join(current))
    return out


def _telling(old: str, new: str) -> list[str]:
    """The lines of an edit worth reading: every line it added or removed, a defining line
    above a change, comments, docstrings and messages; not imports, punctuation or lines kept."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    kept = set(old_lines) & set(new_lines)
    out: list[str] = []
    for source, lines in (("", new_lines), ("removed: ", old_lines)):
        last_define = ""
        for line in lines:
            if _DEFINES.match(line):
                last_define = line
            telling = source == "" and (_COMMENT.search(line) or _DEFINES.match(line))
            if line in kept and not telling or _TRIVIAL.match(line):
                continue
            if last_define and last_define != line and last_define not in out:
                out.append(_readable(last_define))
            out.append(source + _readable(line))
    return list(dict.fromkeys(x for x in out if x.strip()))


def edit_passages(path: str, edits: list[tuple[str, str]]) -> list[str]:
    """Passages for the model from an edit or a write of ``path``: (old, new) pairs of text."""
    head = f"{path} ({_spelled(path.rsplit('/', 1)[-1].rsplit('.', 1)[0])})" if path else "edit"
    lines: list[str] = []
    for old, new in edits:
        lines += _telling(old, new)
    return _passages(head, lines) if lines else []


def failure_passages(command: str, output: str) -> list[str]:
    """Passages from a tool's output: its error lines and the one before each, with the command."""
    lines = output.splitlines()
    keep: list[str] = []
    for i, line in enumerate(lines):
        if _ERROR_LINE.search(line):
            before = lines[i - 1] if i else ""
            keep += [before] if before not in keep and not _TRIVIAL.match(before) else []
            keep.append(line)
    keep = [x.strip() for x in keep if x.strip()][-40:]
    return _passages(command[:200] or "tool output", keep) if keep else []


def edits_of(tool_input: Any) -> tuple[str, list[tuple[str, str]]]:
    """The path and (old, new) pairs of an edit or write call's input (any agent's shape)."""
    if not isinstance(tool_input, dict):
        return "", []
    path = next((str(tool_input[k]) for k in ("file_path", "path", "notebook_path", "filePath")
                 if isinstance(tool_input.get(k), str)), "")
    listed = tool_input.get("edits")
    items: list[Any] = listed if isinstance(listed, list) else [tool_input]
    pairs = []
    for item in items[:100]:
        if isinstance(item, dict):
            old = next((item[k] for k in OLD_TEXT_KEYS if isinstance(item.get(k), str)), "")
            new = next((item[k] for k in NEW_TEXT_KEYS if isinstance(item.get(k), str)), "") or patch_in(item)
            if old or new:
                pairs.append((old, new))
    return path, pairs


def tool_passages(tool: str, payload: Any) -> list[str]:
    """The passages of a tool event's payload worth a vector: an edit's or a write's, or the
    error lines of a shell call's output or of any failed call; else none."""
    if not isinstance(payload, dict):
        return []
    tool_input = payload.get("tool_input", payload.get("toolInput"))
    if tool.lower() in EDIT_TOOLS | WRITE_TOOLS:
        path, pairs = edits_of(tool_input)
        return edit_passages(path, pairs)
    result = payload.get("tool_response", payload.get("tool_output", payload.get("result")))
    error = payload.get("error")
    if not (is_shell(tool) or error):
        return []
    command = tool_input.get("command") if isinstance(tool_input, dict) else tool_input
    output = "\n".join(readable(x, RESULT_CHARS) for x in (result, error) if x)
    return failure_passages(readable(command, 200) or tool, output)
