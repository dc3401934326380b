"""The only door from untrusted text to storage: redact secrets, then cap the size.

`sanitize()` and `sanitize_json()` are the only makers of `Sanitized` and `SanitizedJson`, the
types the store accepts. The steps live in ``redaction`` (text) and ``json_walk`` (parsed JSON);
what counts as a secret in ``secret_patterns`` (the scan), ``secret_formats`` (by shape) and
``secret_context`` (by name and context). Layer 0: pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ai_memory.core.json_walk import walk_json
from ai_memory.core.redaction import TITLE_CHARS, TextKind, cap, clean, redact
from ai_memory.core.secret_patterns import REDACTION_KINDS

__all__ = [
    "REDACTION_KINDS", "Sanitized", "SanitizedJson", "TITLE_CHARS", "TextKind", "cap", "redact", "sanitize",
    "sanitize_json",
]

_MINT = object()  # private sentinel: whoever holds it is this module


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


def sanitize(text: str, kind: TextKind = TextKind.BODY) -> Sanitized:
    """redact() FIRST, then cap for the kind (a secret longer than the cap must still be redacted)."""
    if not isinstance(text, str):
        raise TypeError(f"sanitize() takes str, not {type(text).__name__}")
    out, kinds, cut, _, _ = clean(text, kind)
    return Sanitized(out, tuple(kinds), cut, _key=_MINT)



def sanitize_json(value: object, *, field_caps: Mapping[str, TextKind] | None = None,
                  default_kind: TextKind = TextKind.TOOL_IO, total_limit_bytes: int = 16384) -> SanitizedJson:
    """Recursively redact every string (and every dict key) in a parsed-JSON value, cap each string by
    the kind of its nearest key in field_caps (else default_kind), replace the value of secret-named
    keys ("password", "api_key", ...), then shrink the longest strings, and if need be drop entries
    (marking `"_truncated": true`), until json.dumps(result) fits total_limit_bytes. Never raises."""
    result, kinds, truncated = walk_json(value, field_caps or {}, default_kind, total_limit_bytes)
    return SanitizedJson(result, kinds, truncated, _key=_MINT)
