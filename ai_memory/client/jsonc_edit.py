"""Agents' JSON settings files read as JSON with comments and edited in place.

Gemini CLI reads its ``settings.json`` as JSON with ``//`` and ``/* */`` comments; people
comment Claude Code's files too. ``parse`` reads either (json-five: JSON5, a superset) and
reports a file it cannot read in one line naming the file and the line. ``edit`` writes a new
document into the file's text as the smallest change: json-five's round-trip model keeps every
comment and space on its node, and only the keys and items that differ are touched. An item
removed takes its own lines (and the comments above it) with it; an item added goes where the
new document has it, on a line of its own indented like its siblings; so an install followed by
an uninstall gives the file back byte for byte. The result is parsed back and must be the new
document, key order included, or nothing is written.

json-five's model has no "insert a key here" of its own: what this module adds is the
whitespace around an item added or removed (``_insert``, ``_remove``), and the walk that finds
which items differ. A file already in the layout ``render`` writes (what Claude Code keeps in
``~/.claude.json``, often megabytes) is simply rendered again: its unchanged parts come out the
same, and json-five's parser (pure Python, seconds a megabyte) is not run on it.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import json5
from json5.dumper import ModelDumper
from json5.loader import ModelLoader
from json5.model import JSONArray, JSONObject, JSONText, Key, LineComment, Node, Value

from ai_memory.core.errors import ConfigError

Gap = list[Any]  # whitespace strings and Comment nodes, as json-five keeps them
_AT_LINE = re.compile(r"line (\d+) column (\d+)")
_DEFAULT_UNIT = "  "


def render(doc: Any) -> str:
    """A new file's text: two-space indents, as Claude Code and Gemini CLI write theirs."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def parse(text: str, path: Path) -> Any:
    """The document in ``text``: plain JSON (fast), else JSON with comments."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json5.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _parse_error(path, exc) from exc


def _parse_error(path: Path, exc: Exception) -> ConfigError:
    """One line: the file, the line and what json-five found there (its message can run to many lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    primary = next((line for line in lines if _AT_LINE.search(line)), lines[0] if lines else type(exc).__name__)
    where = _AT_LINE.search(primary)
    reason = re.split(r"\s+in or near token|\s+at: line|:? line \d+ column", primary)[0].rstrip(" .:")
    at = f" at line {where.group(1)}" if where else ""
    return ConfigError(f"cannot parse {path}{at}: {reason}", detail="fix or move it first")


def edit(text: str, new: Any, path: Path) -> str:
    """``text`` holding ``new``, everything the change does not touch kept as it was."""
    old = parse(text, path)
    if text in (render(old), render(old)[:-1]):  # the layout render writes: render again
        rendered = render(new)
        return rendered if text.endswith("\n") else rendered[:-1]
    root = _model(text, path)
    style = _Style.of(text, root.value)
    try:
        root.value = _patch(root.value, old, new, "", style)
    except _Unsafe as exc:
        raise ConfigError(f"cannot edit {path} safely ({exc})", detail="make the change by hand") from exc
    out = json5.dumps(root, dumper=ModelDumper())  # type: ignore[arg-type]  # json5 annotates BaseDumper; its ModelDumper is no subclass
    try:
        done = _same(json5.loads(out), new)
    except (ValueError, RecursionError):
        done = False
    if not done:
        raise ConfigError(f"cannot edit {path} safely (its layout is unusual)", detail="make the change by hand")
    return out


def _model(text: str, path: Path) -> JSONText:
    try:
        return json5.loads(text, loader=ModelLoader())
    except (ValueError, RecursionError) as exc:
        raise _parse_error(path, exc) from exc


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``True`` is not ``1``, and key order counts."""
    return a == b and json.dumps(a) == json.dumps(b)


class _Unsafe(Exception):
    """A change this module will not make without guessing (a key given twice, keys reordered)."""


class _Style:
    """How the file lays out what is added: its line ending and its indent unit."""

    def __init__(self, newline: str, unit: str) -> None:
        self.newline, self.unit = newline, unit

    @classmethod
    def of(cls, text: str, top: Value) -> _Style:
        newline = "\r\n" if "\r\n" in text else "\n"
        gaps = _gaps(top) if isinstance(top, (JSONObject, JSONArray)) and top.values else []
        indents = [indent for gap in gaps[:-1] if (indent := _indent(gap))]
        return cls(newline, indents[0] if indents else _DEFAULT_UNIT)


# ---- the walk: what differs ------------------------------------------------------------------

def _patch(node: Value, old: Any, new: Any, outer: str, style: _Style) -> Value:
    """``node`` (the model of ``old``, on a line indented ``outer``) changed to hold ``new``."""
    if _same(old, new):
        return node
    if isinstance(node, JSONObject) and isinstance(old, dict) and isinstance(new, dict):
        _patch_object(node, old, new, outer, style)
        return node
    if isinstance(node, JSONArray) and isinstance(old, list) and isinstance(new, list):
        _patch_array(node, old, new, outer, style)
        return node
    fresh = _fresh_value(new, outer, style)
    fresh.wsc_before, fresh.wsc_after = node.wsc_before, node.wsc_after
    return fresh


def _patch_object(obj: JSONObject, old: dict[str, Any], new: dict[str, Any], outer: str, style: _Style) -> None:
    names = [_key_name(key) for key in obj.keys]
    if len(set(names)) != len(names):
        raise _Unsafe("an object holds the same key twice")
    for index in reversed(range(len(names))):
        if names[index] not in new:
            _remove(obj, index, outer, style)
    kept = [name for name in names if name in new]
    if kept != [name for name in new if name in old]:
        raise _Unsafe("the keys would change order")
    inner = _inner(obj, outer, style)
    for index, name in enumerate(kept):
        obj.values[index] = _patch(obj.values[index], old[name], new[name], inner, style)
    for index, (name, value) in enumerate(new.items()):
        if name not in old:
            _insert(obj, index, _fresh_pair(name, value, inner, style), outer, style)


def _patch_array(array: JSONArray, old: list[Any], new: list[Any], outer: str, style: _Style) -> None:
    """Items matched as a diff matches lines: equal ones kept, a run replaced by as many patched."""
    inner = _inner(array, outer, style)
    ops = SequenceMatcher(None, [json.dumps(v) for v in old], [json.dumps(v) for v in new], autojunk=False)
    for tag, i1, i2, j1, j2 in reversed(ops.get_opcodes()):  # from the end: earlier indexes hold
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                array.values[i1 + k] = _patch(array.values[i1 + k], old[i1 + k], new[j1 + k], inner, style)
            continue
        for index in reversed(range(i1, i2)):
            _remove(array, index, outer, style)
        for k in range(j2 - j1):
            _insert(array, i1 + k, (_fresh_value(new[j1 + k], inner, style),), outer, style)


def _key_name(key: Node) -> str:
    return str(getattr(key, "characters", None) or getattr(key, "name", ""))


# ---- new nodes -------------------------------------------------------------------------------

def _fresh_value(value: Any, indent: str, style: _Style) -> Value:
    """A model node for ``value`` starting on a line indented ``indent``, its own lines indented
    from there by the file's unit."""
    text = json.dumps(value, indent=style.unit, ensure_ascii=False).replace("\n", style.newline + indent)
    return json5.loads(text, loader=ModelLoader()).value


def _fresh_pair(name: str, value: Any, indent: str, style: _Style) -> tuple[Key, Value]:
    """Model nodes for ``"name": value`` on a line indented ``indent``."""
    fragment = json5.loads("{" + json.dumps(name, ensure_ascii=False) + ": 0}", loader=ModelLoader()).value
    assert isinstance(fragment, JSONObject)
    fresh = _fresh_value(value, indent, style)
    fresh.wsc_before = [" "]
    return fragment.keys[0], fresh


# ---- gaps: the whitespace and comments between items -----------------------------------------
# Gap 0 follows the opening bracket, gap i (0 < i < n) follows the comma before item i, gap n
# precedes the closing bracket (after a trailing comma, if the file has one).

def _first(container: JSONObject | JSONArray, index: int) -> Node:
    return container.keys[index] if isinstance(container, JSONObject) else container.values[index]


def _gaps(container: JSONObject | JSONArray) -> list[Gap]:
    n = len(container.values)
    return [_gap(container, i) for i in range(n + 1)]


def _gap(container: JSONObject | JSONArray, index: int) -> Gap:
    n = len(container.values)
    if index == 0:
        return container.leading_wsc
    if index < n:
        return _first(container, index).wsc_before
    trailing = container.trailing_comma
    return trailing.wsc_after if trailing else container.values[n - 1].wsc_after


def _set_gap(container: JSONObject | JSONArray, index: int, gap: Gap) -> None:
    n = len(container.values)
    if index == 0:
        container.leading_wsc = gap
    elif index < n:
        _first(container, index).wsc_before = gap
    elif container.trailing_comma:
        container.trailing_comma.wsc_after = gap
    else:
        container.values[n - 1].wsc_after = gap


def _split(gap: Gap) -> tuple[Gap, Gap]:
    """(what stays on the line before: spaces, a comment ending it; the rest, from its line break).
    json-five keeps a CRLF line's "\r" inside a line comment: it moves to the line break."""
    for index, part in enumerate(gap):
        if isinstance(part, str) and "\n" in part:
            cut = part.index("\n") - part[: part.index("\n")].endswith("\r")
            head = [p for p in (*gap[:index], part[:cut]) if p != ""]
            tail = [part[cut:], *gap[index + 1:]]
            comment = head[-1] if head and isinstance(head[-1], LineComment) else None
            if comment is not None and comment.value.endswith("\r") and not tail[0].startswith("\r"):
                comment.value, tail[0] = comment.value[:-1], "\r" + tail[0]
            return head, tail
    return list(gap), []


def _without_leading_space(gap: Gap) -> Gap:
    start = next((i for i, p in enumerate(gap) if not isinstance(p, str) or p.strip()), len(gap))
    return gap[start:]


def _indent(gap: Gap) -> str:
    """The indent a gap ends with, if it ends with a line break and spaces; else ''."""
    last = gap[-1] if gap else None
    if not isinstance(last, str) or "\n" not in last:
        return ""
    indent = last.rsplit("\n", 1)[1]
    return indent if not indent.strip() else ""


def _multiline(container: JSONObject | JSONArray) -> bool:
    """Whether items go on lines of their own: an empty container's do; else as its gaps say."""
    return not container.values or any(isinstance(p, str) and "\n" in p for gap in _gaps(container) for p in gap)


def _inner(container: JSONObject | JSONArray, outer: str, style: _Style) -> str:
    """The indent of the container's items: its first indented item's, else one unit in."""
    indents = [indent for gap in _gaps(container)[:-1] if (indent := _indent(gap))]
    return indents[0] if indents else outer + style.unit


def _insert(container: JSONObject | JSONArray, index: int, nodes: tuple[Key, Value] | tuple[Value], outer: str,
            style: _Style) -> None:
    """Put an item (key and value nodes, or a value) at ``index``: on a line of its own when the
    container spans lines (the comment ending the line before stays there), else after ", "."""
    gap = _gap(container, index)
    if _multiline(container):
        head, tail = _split(gap)
        if not container.values and all(isinstance(p, str) for p in head):
            head, tail = [], [style.newline + outer]  # {} opens: {\n  "key": value\n}
        own = head + [style.newline + _inner(container, outer, style)]
    else:
        own, tail = [" "], gap
    _set_gap(container, index, [])
    if isinstance(container, JSONObject) and len(nodes) == 2:
        container.keys.insert(index, nodes[0])
    container.values.insert(index, nodes[-1])
    _set_gap(container, index, own)
    _set_gap(container, index + 1, tail)


def _remove(container: JSONObject | JSONArray, index: int, outer: str, style: _Style) -> None:
    """Take item ``index`` out with its line (the comments above it, the one ending it): the
    exact inverse of ``_insert``."""
    n = len(container.values)
    gap, following = _gap(container, index), _gap(container, index + 1)
    if _multiline(container):
        merged = _split(gap)[0] + _split(following)[1]
        if merged and isinstance(merged[-1], LineComment):  # it would run into what follows
            merged.append(style.newline + outer)
    elif index:
        merged = following
    else:  # the first of one line: its gap opens the container, the space after its comma goes
        merged = gap + _without_leading_space(following)
    if index == n - 1 and index and not container.trailing_comma:
        merged = container.values[index - 1].wsc_after + merged  # the space before the comma that goes
    if isinstance(container, JSONObject):
        del container.keys[index]
    del container.values[index]
    if index == 0 and n > 1:
        _first(container, 0).wsc_before = []  # its gap is in ``merged``, which now opens the container
    if n == 1:
        container.trailing_comma = None
        merged = [] if all(isinstance(p, str) and not p.strip() for p in merged) else merged
    _set_gap(container, index, merged)
