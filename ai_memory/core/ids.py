"""Identifiers: sortable, unique, with no I/O beyond the clock and the OS random source."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case


def _b32(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(now_ms: int | None = None) -> str:
    """A 26-character ULID-style id: 48 bits of milliseconds, then 80 random bits.

    Ids sort by creation time, which keeps observation order stable across reindexes.
    """
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    return _b32(ms, 10) + _b32(int.from_bytes(secrets.token_bytes(10), "big"), 16)
