"""Conversational text: who said an observation, and the sentences it is made of.

Transcripts, chat exports and multi-party prompts carry their speaker as a leading "Name: ".
A long turn says several things; a sentence on its own is matched far more sharply by the
embedding model than the whole turn, but a sentence cut out of "Name: ..." would lose who said
it, which is often what a question asks ("what did Alice paint?"). So each sentence keeps the
speaker of its turn.
"""

from __future__ import annotations

import re

# Events whose text is what someone said (prompts, replies, compaction summaries), as opposed
# to tool calls and their output.
CONVERSATIONAL_EVENTS = ("user-prompt", "stop", "subagent-stop", "pre-compact", "post-compact")
# One or two capitalized words, then a colon and a space: "Caroline: ", "Dr Smith: ".
_AUTHOR = re.compile(r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)?):\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
MAX_SENTENCES = 8
MIN_WORDS = 3  # "Thanks!" and "Wow, nice." say nothing on their own
MAX_CHARS = 2000


# Labels that open a line the way a speaker's name does, but name nobody.
_LABELS = frozenset("""
answer bug context debug error example fix goal hint info input issue note output plan question
reason result status step summary task tip todo traceback update usage warning
""".split())


def author_of(text: str) -> str | None:
    """The speaker named at the start of the text, if any ("Note:" and the like are labels)."""
    match = _AUTHOR.match(text or "")
    if match is None or match.group(1).split()[0].lower() in _LABELS:
        return None
    return match.group(1)


def sentences(text: str) -> list[str]:
    """The text's sentences (at most MAX_SENTENCES, each of MIN_WORDS or more), each prefixed
    with the turn's speaker. Empty when the text is a single sentence: it is its own vector."""
    head = (text or "")[:MAX_CHARS]
    author = author_of(head)
    if author:
        head = head[_AUTHOR.match(head).end():]  # type: ignore[union-attr]
    parts = [" ".join(p.split()) for p in _SENTENCE_END.split(head)]
    parts = [p for p in parts if len(p.split()) >= MIN_WORDS]
    if len(parts) < 2:
        return []
    return [f"{author}: {p}" if author else p for p in parts[:MAX_SENTENCES]]
