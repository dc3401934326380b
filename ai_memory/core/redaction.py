"""Text through the sanitizer's two steps: redact every secret, then cap the size for its kind.

Order matters: redact first, then cap, because a cut can split a secret so that no pattern
matches what is left (the leading system's bug #980). A huge text is first cut to what a cap
could keep plus a margin larger than any secret, so redacting 5 MB to keep 2 KB is not paid.
What counts as a secret lives in ``secret_patterns``. Layer 0: pure, no I/O. Only
``sanitizer`` turns the results into the types the store accepts.
"""

from __future__ import annotations

import enum
import re
from typing import Any

from ai_memory.core.secret_patterns import scan

TITLE_CHARS = 80
_MARKER = "\n…[truncated {} bytes]…\n"
_PRECUT_MARGIN = 65536
_REDACTED_PREFIX = b"[REDACTED:"
_UNSAFE = re.compile("[\x00\ud800-\udfff]")  # NUL and lone surrogates: not storable as UTF-8 text
_CONTROL = re.compile(r"[\x00-\x1f\x7f\s]+")
# Every secret format is 20+ characters or needs a space, "=", ":" or ">"; this text has neither.
_INERT = re.compile(r"[\w./-]*")


class TextKind(enum.Enum):
    """What a piece of text is, which sets its size cap."""

    PROMPT = "prompt"  # user prompts, compaction summaries
    SUMMARY = "summary"
    TOOL_IO = "tool_io"  # excerpts of tool inputs and outputs
    NOTIFICATION = "notification"
    BODY = "body"  # any stored body
    TITLE = "title"  # one line, at most 80 characters

    @property
    def limit(self) -> int:
        """The cap: bytes of UTF-8, except TITLE, which counts characters."""
        return _LIMITS[self]


_LIMITS = {TextKind.PROMPT: 16384, TextKind.SUMMARY: 16384, TextKind.TOOL_IO: 2048,
           TextKind.NOTIFICATION: 2048, TextKind.BODY: 16384, TextKind.TITLE: TITLE_CHARS}


def redact(text: str) -> tuple[str, list[str]]:
    """Replace every secret in text by `[REDACTED:<kind>]`; return the new text and the kinds found."""
    if len(text) < 20 and _INERT.fullmatch(text):  # most JSON keys and short values: nothing to find
        return text, []
    spans = scan(text)
    if not spans:
        return text, []
    spans.sort()
    merged: list[list[Any]] = []  # [start, end, kind, priority]; overlapping finds become one redaction
    for start, end, kind, priority in spans:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if priority < last[3]:  # the more specific rule names it
                last[2], last[3] = kind, priority
        else:
            merged.append([start, end, kind, priority])
    parts: list[str] = []
    pos = 0
    for start, end, kind, _ in merged:
        parts += (text[pos:start], "[REDACTED:", kind, "]")
        pos = end
    parts.append(text[pos:])
    return "".join(parts), [m[2] for m in merged]


def _marker_around(data: bytes, pos: int) -> tuple[int, int] | None:
    """The byte span of a `[REDACTED:kind]` marker that straddles pos, if any."""
    start = data.rfind(_REDACTED_PREFIX, max(0, pos - 48), pos)
    if start < 0:
        return None
    close = data.find(b"]", start)
    return (start, close + 1) if close >= pos else None


def cap(text: str, limit_bytes: int) -> tuple[str, bool]:
    """Keep head and tail within limit_bytes of UTF-8 (never splitting a character), joined by a marker
    like `\\n…[truncated 12345 bytes]…\\n`; marker counted inside the limit. Return (text, was_cut)."""
    return cap_cut(text, limit_bytes, 0)


def cap_cut(text: str, limit_bytes: int, dropped: int) -> tuple[str, bool]:
    """cap(), for a text whose middle already lost `dropped` bytes (counted in the marker)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit_bytes and not dropped:
        return text, False
    budget = limit_bytes - len(_MARKER.format(len(data) + dropped).encode())  # digits of the total bound the count
    if budget < 8:  # no room for a marker: keep what head fits
        head = _char_start(data, max(0, limit_bytes))
        return data[:head].decode("utf-8", "surrogatepass"), True
    # Clamped: when the cut before redaction dropped bytes and redaction then shrank what was
    # left (a key block without its END line runs to the end), all of it may fit: keep it whole.
    head = _char_start(data, min(len(data), budget - budget // 2))
    tail = _char_end(data, max(head, len(data) - budget // 2))
    # never leave half a redaction marker: "[REDACT" would read as damage, or worse, as text
    if (span := _marker_around(data, head)) is not None:
        head = span[0]
    if (span := _marker_around(data, tail)) is not None:
        tail = span[1]
    marker = _MARKER.format(tail - head + dropped)
    return (data[:head] + marker.encode() + data[tail:]).decode("utf-8", "surrogatepass"), True


def _char_start(data: bytes, pos: int) -> int:
    """pos moved back to the first byte of a UTF-8 character."""
    while 0 < pos < len(data) and data[pos] & 0xC0 == 0x80:
        pos -= 1
    return pos


def _char_end(data: bytes, pos: int) -> int:
    """pos moved forward to the first byte of a UTF-8 character."""
    while pos < len(data) and data[pos] & 0xC0 == 0x80:
        pos += 1
    return pos


def title(text: str) -> tuple[str, bool]:
    line = _CONTROL.sub(" ", text).strip()
    if len(line) <= TITLE_CHARS:
        return line, False
    cut = TITLE_CHARS - 1
    marker = line.rfind("[REDACTED:", 0, cut)
    if marker >= 0 and line.find("]", marker) >= cut:
        cut = marker
    return line[:cut].rstrip() + "…", True


def storable(text: str) -> str:
    if "\x00" in text or not text.isascii():
        return _UNSAFE.sub("\ufffd", text)
    return text


def _precut(text: str, kind: TextKind) -> tuple[str, int]:
    """The head and tail of text that a cap for kind could keep, plus a margin, and the UTF-8 bytes
    dropped between them. Redacting 5 MB to keep 2 KB is waste; the margin is larger than any secret
    (an 8192-bit RSA key is 6.5 KB), so none can straddle this cut and survive the cap."""
    window = kind.limit + _PRECUT_MARGIN
    if kind is TextKind.TITLE:  # a title keeps only its head
        if len(text) <= window:
            return text, 0
        return text[:window], len(text[window:].encode("utf-8", "surrogatepass"))
    if len(text) <= 2 * window + 1:
        return text, 0
    middle = text[window:-window]
    # the "\n" keeps the two halves from gluing into one token; it falls in the part cap removes
    return text[:window] + "\n" + text[-window:], len(middle.encode("utf-8", "surrogatepass")) - 1


def clean(text: str, kind: TextKind) -> tuple[str, list[str], bool, str, int]:
    """(capped text, kinds, was cut, redacted text before the cap, bytes dropped before redaction)."""
    text, dropped = _precut(text, kind)
    full, kinds = redact(storable(text))
    if kind is TextKind.TITLE:
        out, cut = title(full)
        return out, kinds, cut or dropped > 0, full, dropped
    out, cut = cap_cut(full, kind.limit, dropped)
    return out, kinds, cut, full, dropped
