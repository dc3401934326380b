"""What each kind of request body may hold: its bytes, and the JSON tokens in them.

A token is a string, a ``[``, a ``{`` or a ``,``: an upper bound on the values a body parses to,
counted by one regular expression without parsing anything. Parsed JSON costs far more than its
text (``[],`` is 3 bytes on the wire and about 80 in memory), so the daemon refuses a body with
more tokens than its route can use before it parses it, and the import sizes its batches by the
same count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class BodyLimit:
    """What one route can use: ``max_bytes`` of body, holding at most ``max_tokens`` JSON tokens."""

    what: str
    max_bytes: int
    max_tokens: int


# An event keeps at most 16 KB of sanitized JSON (5,462 values: the sanitizer's node budget), each
# text capped at 16 KB; the rest is cut. A body may carry more than that (a tool's whole output),
# not a thousand times more.
EVENT = BodyLimit("a hook event", 1 << 20, 32_768)
BATCH = BodyLimit("a batch of hook events", 2 << 20, 65_536)
# a memory's text is capped at 16 KB, a handoff has at most 50 items per list, a message 16 KB
WRITE = BodyLimit("a page, handoff or message", 256 << 10, 8_192)
# a query (8,192 characters, 64 projects), a claim, a name, a switch
SMALL = BodyLimit("this request", 64 << 10, 4_096)

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{,]', re.DOTALL)


def json_tokens(raw: bytes | bytearray, most: int) -> int:
    """The tokens in ``raw``, counted up to ``most + 1`` (a bomb is not counted to its end)."""
    count = 0
    for count, _ in enumerate(_TOKEN.finditer(raw), 1):
        if count > most:
            break
    return count
