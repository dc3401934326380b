"""The only door from untrusted text to storage: redact secrets, then cap the size.

`sanitize()` and `sanitize_json()` are the only makers of `Sanitized` and `SanitizedJson`, the
types the store accepts. Order matters: redact first, then cap, because a cut can split a secret
so that no pattern matches what is left (the leading system's bug #980). Layer 0: pure, no I/O.
What counts as a secret lives in `secret_patterns`.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from frozen.secret_patterns_efd2560 import REDACTION_KINDS, TOKEN, name_strength, scan

__all__ = [
    "REDACTION_KINDS", "Sanitized", "SanitizedJson", "TextKind", "cap", "redact", "sanitize", "sanitize_json",
]

_MINT = object()  # private sentinel: whoever holds it is this module
TITLE_CHARS = 80
DEPTH_LIMIT = 64
_KEY_LIMIT_BYTES = 256
_MARKER = "\n…[truncated {} bytes]…\n"
_PRECUT_MARGIN = 65536
_SECRET_VALUE = "[REDACTED:secret_assignment]"
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


def _spend_key(obj: Sanitized | SanitizedJson) -> None:
    if obj._key is not _MINT:
        raise TypeError(f"{type(obj).__name__} is made only by sanitize() or sanitize_json()")
    # Forget the key, so dataclasses.replace() cannot copy it into a forged value.
    object.__setattr__(obj, "_key", None)


@dataclass(frozen=True, slots=True)
class Sanitized:
    """Text that has passed the sanitizer. Only sanitize()/sanitize_json() can build one."""

    text: str
    redactions: tuple[str, ...]  # the kinds redacted, one per redaction, in order of appearance
    truncated: bool
    _key: object = field(default=None, repr=False, compare=False, kw_only=True)

    def __post_init__(self) -> None:
        _spend_key(self)


@dataclass(frozen=True, slots=True)
class SanitizedJson:
    """A JSON value (dict/list/str/num/bool/None) whose every string was sanitized. Only sanitize_json() builds one."""

    value: object
    redactions: tuple[str, ...]
    truncated: bool
    _key: object = field(default=None, repr=False, compare=False, kw_only=True)

    def __post_init__(self) -> None:
        _spend_key(self)


def redact(text: str) -> tuple[str, list[str]]:
    """Replace every secret in text by `[REDACTED:<kind>]`; return the new text and the kinds found."""
    if len(text) < 20 and _INERT.fullmatch(text):  # most JSON keys and short values: nothing to find
        return text, []
    spans = scan(text)
    if not spans:
        return text, []
    spans.sort()
    merged: list[list] = []  # [start, end, kind, priority]; overlapping finds become one redaction
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
    return _cap(text, limit_bytes, 0)


def _cap(text: str, limit_bytes: int, dropped: int) -> tuple[str, bool]:
    """cap(), for a text whose middle already lost `dropped` bytes (counted in the marker)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit_bytes and not dropped:
        return text, False
    budget = limit_bytes - len(_MARKER.format(len(data) + dropped).encode())  # digits of the total bound the count
    if budget < 8:  # no room for a marker: keep what head fits
        head = _char_start(data, max(0, limit_bytes))
        return data[:head].decode("utf-8", "surrogatepass"), True
    head = _char_start(data, budget - budget // 2)
    tail = _char_end(data, len(data) - budget // 2)
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


def _title(text: str) -> tuple[str, bool]:
    line = _CONTROL.sub(" ", text).strip()
    if len(line) <= TITLE_CHARS:
        return line, False
    cut = TITLE_CHARS - 1
    marker = line.rfind("[REDACTED:", 0, cut)
    if marker >= 0 and line.find("]", marker) >= cut:
        cut = marker
    return line[:cut].rstrip() + "…", True


def _storable(text: str) -> str:
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


def _clean(text: str, kind: TextKind) -> tuple[str, list[str], bool, str, int]:
    """(capped text, kinds, was cut, redacted text before the cap, bytes dropped before redaction)."""
    text, dropped = _precut(text, kind)
    full, kinds = redact(_storable(text))
    if kind is TextKind.TITLE:
        out, cut = _title(full)
        return out, kinds, cut or dropped > 0, full, dropped
    out, cut = _cap(full, kind.limit, dropped)
    return out, kinds, cut, full, dropped


def sanitize(text: str, kind: TextKind = TextKind.BODY) -> Sanitized:
    """redact() FIRST, then cap for the kind (a secret longer than the cap must still be redacted)."""
    if not isinstance(text, str):
        raise TypeError(f"sanitize() takes str, not {type(text).__name__}")
    out, kinds, cut, _, _ = _clean(text, kind)
    return Sanitized(out, tuple(kinds), cut, _key=_MINT)


# ---------------------------------------------------------------- JSON values

_Slot = tuple[object, object, str, TextKind, int]  # container, key or index, redacted text, kind, bytes dropped


class _Walk:
    """One pass over a parsed JSON value: sanitize every string and key, bound depth and node count."""

    def __init__(self, field_caps: Mapping[str, TextKind], node_budget: int) -> None:
        self.field_caps = field_caps
        self.nodes_left = node_budget  # every node costs >= 3 output bytes: more cannot fit anyway
        self.kinds: list[str] = []
        self.truncated = False
        self.slots: list[_Slot] = []
        self.size_bound = 0  # json.dumps(result) is no longer than this; skips the dump when it fits

    def _count(self, text: str) -> None:
        # escaped, an ASCII character takes at most 6 bytes (\u001f), any other at most 12 (a surrogate pair)
        self.size_bound += (6 if text.isascii() else 12) * len(text) + 8

    def string(self, text: str, kind: TextKind, parent: object, key: object) -> str:
        out, kinds, cut, full, dropped = _clean(text, kind)
        self._count(out)
        self.kinds += kinds
        self.truncated |= cut
        if cut or len(full) > 64:
            self.slots.append((parent, key, full, kind, dropped))
        return out

    def key(self, name: str) -> str:
        full, kinds = redact(_storable(name))
        self.kinds += kinds
        key = cap(full, _KEY_LIMIT_BYTES)[0]
        self._count(key)
        return key

    def value(self, value: object, kind: TextKind, depth: int, parent: object, key: object) -> object:
        self.nodes_left -= 1
        self.size_bound += 32  # brackets, separators, a number's digits (longer ints counted below)
        if isinstance(value, str):
            return self.string(value, kind, parent, key)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            if value.bit_length() <= 4000:  # int -> str has a 4300-digit limit
                self.size_bound += value.bit_length() // 3
                return value
            self.truncated = True
            return "[NUMBER-TOO-LARGE]"
        if isinstance(value, float):
            return value if math.isfinite(value) else None  # NaN is not JSON
        if depth >= DEPTH_LIMIT:
            self.truncated = True
            return "[DEPTH-LIMIT]"
        if isinstance(value, dict):
            return self.mapping(value, kind, depth + 1)
        if isinstance(value, (list, tuple)):
            return self.sequence(value, kind, depth + 1)
        marker = f"[UNSUPPORTED:{type(value).__name__}]"
        self._count(marker)
        return marker

    def mapping(self, value: dict, kind: TextKind, depth: int) -> dict:
        out: dict[str, object] = {}
        for raw_key, item in value.items():
            if self.nodes_left <= 0:
                self.truncated = True
                out["_truncated"] = True
                break
            name = raw_key if isinstance(raw_key, str) else _json_key(raw_key)
            key = self.key(name)
            child_kind = self.field_caps.get(name, kind)
            if isinstance(item, str) and item and not _is_marker(item) and name_strength(name) >= TOKEN:
                out[key] = _SECRET_VALUE  # {"password": ...}: the name says it all
                self._count(_SECRET_VALUE)
                self.kinds.append("secret_assignment")
                self.nodes_left -= 1
            else:
                out[key] = self.value(item, child_kind, depth, out, key)
        return out

    def sequence(self, value: list | tuple, kind: TextKind, depth: int) -> list:
        out: list[object] = []
        for index, item in enumerate(value):
            if self.nodes_left <= 0:
                self.truncated = True
                out.append(f"…[truncated {len(value) - index} items]")
                break
            out.append(None)
            out[index] = self.value(item, kind, depth, out, index)
        return out


def _is_marker(text: str) -> bool:
    return text.startswith("[REDACTED:") and text.endswith("]") and text.count("]") == 1


def _json_key(key: object) -> str:
    """The key json.dumps would write for a non-str dict key (or a type marker if it would fail)."""
    if key is None or isinstance(key, (bool, int, float)):
        try:
            return json.dumps(key)
        except ValueError:
            return "[NUMBER-TOO-LARGE]"
    return f"[UNSUPPORTED:{type(key).__name__}]"


def sanitize_json(value: object, *, field_caps: Mapping[str, TextKind] | None = None,
                  default_kind: TextKind = TextKind.TOOL_IO, total_limit_bytes: int = 16384) -> SanitizedJson:
    """Recursively redact every string (and every dict key) in a parsed-JSON value, cap each string by
    the kind of its nearest key in field_caps (else default_kind), replace the value of secret-named
    keys ("password", "api_key", ...), then shrink the longest strings, and if need be drop entries
    (marking `"_truncated": true`), until json.dumps(result) fits total_limit_bytes. Never raises."""
    walk = _Walk(field_caps or {}, max(1, total_limit_bytes // 3 + 1))
    holder: list[object] = [None]
    holder[0] = walk.value(value, default_kind, 0, holder, 0)
    if walk.size_bound <= total_limit_bytes and not walk.truncated:
        return SanitizedJson(holder[0], tuple(walk.kinds), False, _key=_MINT)
    result, shrunk = _fit_total(holder, walk.slots, total_limit_bytes)
    return SanitizedJson(result, tuple(walk.kinds), walk.truncated or shrunk, _key=_MINT)


def _dumped_len(value: object) -> int:
    return len(json.dumps(value))  # ensure_ascii: the longest form, and bytes == characters


def _fit_total(holder: list[object], slots: list[_Slot], limit: int) -> tuple[object, bool]:
    """Shrink the longest strings evenly until the value fits; failing that, drop entries."""
    size = _dumped_len(holder[0])
    if size <= limit:
        return holder[0], False
    # Shrink strings only if that can be enough; if the entries are too many, keep the strings whole.
    if sum(max(0, _escaped_len(slot) - 64) for slot in slots) >= size - limit:
        for _ in range(8):  # escaping makes sizes approximate; a few rounds converge
            lengths = [_escaped_len(slot) for slot in slots]
            level = _water_level(lengths, size - limit)
            for slot, length in zip(slots, lengths):
                if length > level:
                    _shrink(slot, length, level)
            size = _dumped_len(holder[0])
            if size <= limit or level <= 64:
                break
    if size <= limit:
        return holder[0], True
    fitted, _ = _fit(holder[0], limit)
    return (None if fitted is _NO_FIT else fitted), True


def _escaped_len(slot: _Slot) -> int:
    parent, key = slot[0], slot[1]
    return len(json.dumps(parent[key])) - 2  # type: ignore[index]


def _shrink(slot: _Slot, length: int, level: int) -> None:
    """Re-cap the slot's string from its redacted text, so that it escapes to about `level` bytes."""
    parent, key, full, kind, dropped = slot
    current: str = parent[key]  # type: ignore[index]
    limit = max(0, int(level * len(current.encode("utf-8", "surrogatepass")) / max(1, length)))
    if kind is TextKind.TITLE:
        parent[key] = _title(full)[0][:max(1, limit)]  # type: ignore[index]
    else:
        parent[key] = _cap(full, limit, dropped)[0]  # type: ignore[index]


def _water_level(lengths: list[int], excess: int) -> int:
    """The largest per-string length L whose cuts (sum of length - L) remove at least excess; >= 64."""
    low, high = 64, max(lengths, default=64)
    while low < high:
        mid = (low + high + 1) // 2
        if sum(n - mid for n in lengths if n > mid) >= excess:
            low = mid
        else:
            high = mid - 1
    return low


_NO_FIT = object()
_DICT_MARK = len(', "_truncated": true')


def _fit(value: object, budget: int) -> tuple[object, int]:
    """value, trimmed greedily to serialize within budget bytes, and its size; _NO_FIT if impossible."""
    if isinstance(value, dict):
        return _fit_dict(value, budget)
    if isinstance(value, list):
        return _fit_list(value, budget)
    size = _dumped_len(value)
    if size <= budget:
        return value, size
    if isinstance(value, str) and budget >= 16:
        text = cap(value, budget - 2)[0]
        while (size := _dumped_len(text)) > budget and text:
            text = cap(text, len(text.encode("utf-8", "surrogatepass")) * budget // size - 1)[0]
        return (text, size) if text else (_NO_FIT, 0)
    return _NO_FIT, 0


def _fit_dict(value: dict, budget: int) -> tuple[object, int]:
    out: dict[str, object] = {}
    used = 2  # {}; every entry reserves room for a closing `, "_truncated": true`
    cut = value.get("_truncated") is True  # the walk already dropped entries here
    for key, item in value.items():
        if key == "_truncated" and cut:
            continue
        cost = len(json.dumps(key)) + 2 + (2 if out else 0)
        child, size = _fit(item, budget - used - cost - _DICT_MARK)
        if child is _NO_FIT:
            cut = True
            break
        out[key] = child
        used += cost + size
    if cut:
        used += _DICT_MARK - (0 if out else 2)
        out["_truncated"] = True
    return (out, used) if used <= budget else (_NO_FIT, 0)


def _fit_list(value: list, budget: int) -> tuple[object, int]:
    out: list[object] = []
    used = 2
    for index, item in enumerate(value):
        mark = _dumped_len(f"…[truncated {len(value) - index} items]") + 2
        child, size = _fit(item, budget - used - (2 if out else 0) - mark)
        if child is _NO_FIT:
            size = used + mark - (2 if not out else 0)
            out.append(f"…[truncated {len(value) - index} items]")
            return (out, size) if size <= budget else (_NO_FIT, 0)
        out.append(child)
        used += size + (2 if len(out) > 1 else 0)
    return (out, used) if used <= budget else (_NO_FIT, 0)
