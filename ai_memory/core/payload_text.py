"""Reading untrusted payload values as text: any shape in, a bounded clean string out.

Hook payloads come from many agents and versions; a field may be missing, a list, a number or
a dict where a string was expected. These readers never raise, and the text they return is
bounded by the limit asked for.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["as_dict", "clip", "code_span", "collapsed", "first_of", "one_line", "text_of"]

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_SPACE = re.compile(r"\s+")


def text_of(value: Any, limit: int = 200_000) -> str:
    """A string or number as text, control characters dropped, at most ``limit`` characters; else ""."""
    if isinstance(value, str):
        return _CONTROL.sub("", value[:limit])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word where one is near, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.6 else cut).rstrip(" ,;:") + "…"


def collapsed(text: str) -> str:
    """The text on one line: every run of whitespace a single space, ends stripped."""
    return _SPACE.sub(" ", text).strip()


def one_line(value: Any, limit: int) -> str:
    """One line: whitespace collapsed, clipped at a word."""
    return clip(collapsed(text_of(value, limit * 4 + 256)), limit)


def as_dict(value: Any) -> dict[str, Any]:
    """The value when it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def first_of(d: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The value of the first key present and not empty, else None."""
    for key in keys:
        if d.get(key) not in (None, ""):
            return d[key]
    return None


def code_span(text: str) -> str:
    """An inline code span that survives backticks in the text."""
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if len(fence) > 1 else f"`{text}`"
