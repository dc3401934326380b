"""Text for people: a page or an observation as the words it says, for search snippets.

Markdown is read with the parser (``core.links``'s, so wikilinks are known): headings, list
and quote markers, emphasis, link syntax and fences go, their words stay (a wikilink shows its
shown text or its target). Tool input and output recorded as JSON (whole or cut off) shows only
its string values: ``{"stdout": "Created x", "noOutputExpected": false}`` reads "Created x".
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from ai_memory.core.links import inline_text, markdown

# A JSON string, and whether a colon follows it (then it is a key, not a value).
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?')
_JSONISH = re.compile(r"^\s*[\[{]")


CACHED_CHARS = 8_000  # texts up to this long are remembered: at most 1,024 of them, ~16 MB


def readable(text: str) -> str:
    """The words of ``text``, one space between them, without markup or JSON syntax."""
    return _remembered(text) if len(text) <= CACHED_CHARS else _readable(text)


@lru_cache(maxsize=1024)  # the same turns and pages come back as snippets search after search
def _remembered(text: str) -> str:
    return _readable(text)


def _readable(text: str) -> str:
    lines = [_json_words(line) if _JSONISH.match(line) else line for line in text.splitlines()]
    return " ".join(_markdown_words("\n".join(lines)).split())


def _json_words(line: str) -> str:
    try:
        return " ".join(_strings(json.loads(line)))
    except ValueError:  # cut off (bodies keep the first 2 KB of a value): read it token by token
        values = [m.group(1) for m in _JSON_STRING.finditer(line) if not m.group(2)]
        return " ".join(_unescape(v) for v in values)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _unescape(value: str) -> str:
    try:
        return str(json.loads(f'"{value}"'))
    except ValueError:
        return value


def _markdown_words(text: str) -> str:
    if not re.search(r"[#*_`\[\]>|~-]", text):
        return text
    out: list[str] = []
    for token in markdown().parse(text):
        if token.type in ("fence", "code_block"):
            out.append(token.content)
        elif token.type == "inline":
            out.append(inline_text(token.children or []))
        elif token.type in ("paragraph_close", "heading_close", "list_item_close", "td_close", "th_close"):
            out.append("\n")
    return " ".join(out)
