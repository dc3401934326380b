"""Parsed JSON through the sanitizer: every string and key redacted and capped, values of secret
names replaced, neighbouring values read joined, then the whole fitted to its byte budget.

Layer 0: pure, no I/O. ``walk_json`` returns plain values; ``sanitizer.sanitize_json`` makes the
``SanitizedJson`` the store accepts.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from ai_memory.core.redaction import TextKind, cap, cap_cut, clean, redact, storable, title
from ai_memory.core.secret_patterns import TOKEN, name_strength, scan

_SECRET_VALUE = "[REDACTED:secret_assignment]"
DEPTH_LIMIT = 64
_KEY_LIMIT_BYTES = 256

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
        out, kinds, cut, full, dropped = clean(text, kind)
        self._count(out)
        self.kinds += kinds
        self.truncated |= cut
        if cut or len(full) > 64:
            self.slots.append((parent, key, full, kind, dropped))
        return out

    def key(self, name: str) -> str:
        full, kinds = redact(storable(name))
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

    def glued(self, items: list[Any]) -> list[Any]:
        """A secret cut in two and sent as two neighbouring values (``{"a": "ghp_12…", "b": "…xyz"}``):
        a half may be too short to match, or match alone and leave the other half as text, so
        every pair of neighbouring strings is read joined, before either is sanitized."""
        for i in range(len(items) - 1):
            left, right = items[i][1], items[i + 1][1]
            if isinstance(left, str) and isinstance(right, str) and (cut := split_secret(left, right)) is not None:
                kind, left_at, right_at = cut
                items[i] = (items[i][0], f"{left[:left_at]}[REDACTED:{kind}]")
                items[i + 1] = (items[i + 1][0], f"[REDACTED:{kind}]{right[right_at:]}")
                self.kinds.append(kind)
        return items

    def mapping(self, value: dict[Any, Any], kind: TextKind, depth: int) -> dict[Any, Any]:
        out: dict[str, object] = {}
        for raw_key, item in self.glued(list(value.items())) if len(value) > 1 else value.items():
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

    def sequence(self, value: list[Any] | tuple[Any, ...], kind: TextKind, depth: int) -> list[Any]:
        out: list[object] = []
        items = self.glued(list(enumerate(value))) if len(value) > 1 else enumerate(value)
        for index, item in items:
            if self.nodes_left <= 0:
                self.truncated = True
                out.append(f"…[truncated {len(value) - index} items]")
                break
            out.append(None)
            out[index] = self.value(item, kind, depth, out, index)
        return out


_TAIL = re.compile(r"[A-Za-z0-9_+/=.-]{1,80}\Z")
_HEAD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+/=.-]{0,199}")


def split_secret(left: str, right: str) -> tuple[str, int, int] | None:
    """(kind, where the secret starts in left, where it ends in right) when a secret runs across
    the end of left into the start of right; None otherwise (almost always: cheap checks first)."""
    if not left or not right or not right[0].isalnum() or _is_marker(left) or _is_marker(right):
        return None
    tail = _TAIL.search(left, max(0, len(left) - 80))
    head = _HEAD.match(right)
    if tail is None or head is None or len(tail.group()) + len(head.group()) < 20:
        return None
    joint = len(tail.group())
    for start, end, kind, _ in scan(tail.group() + head.group()):
        if start < joint < end:
            return kind, tail.start() + start, end - joint
    return None


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
        parent[key] = title(full)[0][:max(1, limit)]  # type: ignore[index]
    else:
        parent[key] = cap_cut(full, limit, dropped)[0]  # type: ignore[index]


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


def _fit_dict(value: dict[Any, Any], budget: int) -> tuple[object, int]:
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


def _fit_list(value: list[Any], budget: int) -> tuple[object, int]:
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


def walk_json(value: object, field_caps: Mapping[str, TextKind], default_kind: TextKind,
              total_limit_bytes: int) -> tuple[object, tuple[str, ...], bool]:
    """(the sanitized value, the kinds redacted, whether anything was cut); see sanitize_json."""
    walk = _Walk(field_caps, max(1, total_limit_bytes // 3 + 1))
    holder: list[object] = [None]
    holder[0] = walk.value(value, default_kind, 0, holder, 0)
    if walk.size_bound <= total_limit_bytes and not walk.truncated:
        return holder[0], tuple(walk.kinds), False
    result, shrunk = _fit_total(holder, walk.slots, total_limit_bytes)
    return result, tuple(walk.kinds), walk.truncated or shrunk
