"""Splitting a page into chunks for embedding: paragraphs and list items packed to a word budget.

MiniLM reads at most 256 word pieces; ~120 words keeps a chunk whole and on one topic. Each
chunk carries the page title, so a chunk alone still says what it is about.
"""

from __future__ import annotations

import hashlib
import re

MAX_WORDS = 120
MAX_CHUNKS = 64
_BLOCK_SPLIT = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)|\n(?=#)")


def chunk_text(title: str, body: str, max_words: int = MAX_WORDS) -> list[str]:
    """Chunks of ``body`` (blocks packed up to ``max_words``), each prefixed with the title."""
    blocks = [" ".join(b.split()) for b in _BLOCK_SPLIT.split(body)]
    chunks: list[str] = []
    current: list[str] = []
    words = 0
    for block in (b for b in blocks if b and not b.startswith("---")):
        n = len(block.split())
        if current and words + n > max_words:
            chunks.append(" ".join(current))
            current, words = [], 0
        if n > max_words:  # one long paragraph: cut it into windows
            tokens = block.split()
            for i in range(0, len(tokens), max_words):
                chunks.append(" ".join(tokens[i:i + max_words]))
            continue
        current.append(block)
        words += n
    if current:
        chunks.append(" ".join(current))
    if not chunks:
        chunks = [title]
    return [f"{title}: {c}" if title and not c.startswith(title) else c for c in chunks[:MAX_CHUNKS]]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
