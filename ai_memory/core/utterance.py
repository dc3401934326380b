"""Conversational text: the events that are someone speaking, and the sentences a turn is made of.

A long turn says several things; a sentence on its own is matched far more sharply by the
embedding model than the whole turn, so each sentence of a conversational turn gets a vector
of its own.
"""

from __future__ import annotations

import re

# Events whose text is what someone said (prompts, replies, compaction summaries), as opposed
# to tool calls and their output.
CONVERSATIONAL_EVENTS = ("user-prompt", "stop", "subagent-stop", "pre-compact", "post-compact")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
MAX_SENTENCES = 8
MIN_WORDS = 3  # "Thanks!" and "Wow, nice." say nothing on their own
MAX_CHARS = 2000


def sentences(text: str) -> list[str]:
    """The text's sentences (at most MAX_SENTENCES, each of MIN_WORDS or more). Empty when the
    text is a single sentence: it is its own vector."""
    parts = [" ".join(p.split()) for p in _SENTENCE_END.split((text or "")[:MAX_CHARS])]
    parts = [p for p in parts if len(p.split()) >= MIN_WORDS]
    return parts[:MAX_SENTENCES] if len(parts) >= 2 else []
