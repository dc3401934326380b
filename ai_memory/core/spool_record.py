"""Reading one spool file: the JSON envelope a hook client wrote.

The shell client streams an event's payload straight from the agent into the envelope, so an
agent that sends nothing on stdin leaves ``"payload":}`` at its end. That is the one repair
made: such a payload reads as ``{}``; anything else that is not JSON stays unreadable.
"""

from __future__ import annotations

import json
import re

_EMPTY_PAYLOAD = re.compile(rb'"payload":\s*}\s*\Z')


def parse_spool_record(data: bytes) -> object:
    """The decoded envelope; raises ``ValueError`` (``UnicodeDecodeError`` included) when unreadable."""
    try:
        return json.loads(data)
    except ValueError:
        repaired = _EMPTY_PAYLOAD.sub(b'"payload":{}}', data)
        if repaired == data:
            raise
        return json.loads(repaired)
