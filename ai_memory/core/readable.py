"""Text for people: a page or an observation as the words it says, for search snippets.

Code and tool output (a tool call's body) are shown as they are; only markdown is read as markdown.

Markdown is read with the parser (``core.links``'s, so wikilinks are known): headings, list
and quote markers, emphasis, link syntax and fences go, their words stay (a wikilink shows its
shown text or its target). Tool input and output recorded as JSON (whole or cut off) shows only
its string values: ``{"stdout": "Created x", "noOutputExpected": false}`` reads "Created x".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from ai_memory.core.links import inline_text, markdown

# A JSON string, and whether a colon follows it (then it is a key, not a value).
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"(\s*:)?')
_JSONISH = re.compile(r"^\s*[\[{]")


CACHED_CHARS = 8_000  # texts up to this long are remembered: at most 512 of them, ~8 MB
_MARKUP = re.compile(r"[#*_`\[\]>|~-]")  # without any of these, a text is read as it is
# Of those, the places where one can be markup (or where markdown changes other characters:
# escapes, entities, HTML, NUL): emphasis, code, links, tables and strikethrough anywhere, an
# underscore at a word's edge, and at a line's start (after at most three spaces) a heading,
# quote, list marker, underline or rule. A text with the characters but none of these places reads
# the same parsed or not (an underscore inside a name, a dash inside a word, a # mid-line: most
# code), so it is not parsed either.
_MARKUP_PLACE = re.compile(r"[*`\[\]|~\\&<\x00]|(?<!\w)_|_(?!\w)"
                           r"|^[ \t]{0,3}(?:[#>]|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|=+[ \t]*$|-[- \t]*$)",
                           re.M)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
PREFIX_CHARS = (500, 4_000)  # where ``readable_prefixes`` tries to stop


def readable(text: str, markdown: bool = True) -> str:
    """The words of ``text``, one space between them, without markup or JSON syntax. A text
    that is not ``markdown`` (a tool call: code, a command's output, as ``core.tool_text`` wrote
    it) is shown as it is, but for the spaces, unless it is JSON as a whole, as tool calls
    recorded before that were: then its string values."""
    if not markdown:
        return " ".join((_converted(text) if _JSONISH.match(text) else text).split())
    return _remembered(text) if len(text) <= CACHED_CHARS else _readable(text)


@lru_cache(maxsize=512)  # the same turns and pages come back as snippets search after search
def _remembered(text: str) -> str:
    return _readable(text)


def _readable(text: str) -> str:
    converted = _converted(text)
    return _words(converted, _is_markdown(converted))


def readable_prefixes(text: str, at_least: int = 0) -> Iterator[tuple[str, bool]]:
    """``readable`` of ever longer beginnings of ``text``, and whether it is the whole, which
    comes last. Each beginning is where the whole begins (the same words, then a space and
    more), so a caller that needs only the start (a snippet near the first match) reads a long
    text no further than that.

    A beginning is cut at a blank line, read as markdown exactly when the whole text is: the
    blocks before a blank line are what they are whatever follows (a paragraph, a table or a
    setext heading ends there; a fence or a list that goes on only adds words). The one thing
    later lines change is a reference link (``[x]`` is a link only if ``[x]: url`` is defined
    somewhere), so a text with a definition after the cut is read whole. No beginning is
    shorter than ``at_least`` characters."""
    if len(text) > max(PREFIX_CHARS[0], at_least):
        converted = _converted(text)
        parse = _is_markdown(converted)
        for size in dict.fromkeys(max(size, at_least) for size in PREFIX_CHARS):
            cut = _BLANK_LINE.search(converted, size)
            if cut is None or "]:" in converted[cut.start():]:
                break
            yield _words(converted[:cut.start()], parse), False
    yield readable(text), True


def _is_markdown(text: str) -> bool:
    return _MARKUP.search(text) is not None and _MARKUP_PLACE.search(text) is not None


def _converted(text: str) -> str:
    """JSON lines as their string values; other lines as they are."""
    return "\n".join(_json_words(line) if _JSONISH.match(line) else line for line in text.splitlines())


def _words(text: str, parse: bool) -> str:
    return " ".join((_markdown_words(text) if parse else text).split())


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
    out: list[str] = []
    for token in markdown().parse(text):
        if token.type in ("fence", "code_block"):
            out.append(token.content)
        elif token.type == "inline":
            out.append(inline_text(token.children or []))
        elif token.type in ("paragraph_close", "heading_close", "list_item_close", "td_close", "th_close"):
            out.append("\n")
    return " ".join(out)
