"""Secrets written as words: BIP39 seed phrases, 12 to 24 words of one list of 2048, which a
wallet turns back into its keys. No pattern of characters tells them from prose; the list does.

The list is the one of the ``mnemonic`` package (Trezor's reference implementation of BIP39),
loaded on first need. Cheap first, as prose and comments are most of what the sanitizer reads:
a phrase is lower case, so it lies in a stretch of lower-case letters, spaces and a list's
numbering; twelve of its words fill 57 characters or more (the shortest of 200,000 drawn), so
``bytes.translate`` with ``find`` or ``split`` locate stretches of 55 in C; a stretch with fewer than
eleven spaces or newlines, or fewer than ten listed words (counted by ``map`` over its split), is
passed by (``str.translate`` or a regex there cost prose 3 µs a stretch), and only the rest is
read word by word. Twelve listed words in a row, eight of them different, are a phrase, checksum
or not (one mistyped word still gives the wallet away). A text longer than 512 characters is read
only if it names what a phrase is for (a mnemonic, a wallet, a seed, recovery words): reading every
2 KB of prose for one cost the hook path a third more. Layer 0: pure.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterator

from ai_memory.core.secret_shapes import Found

__all__ = ["PHRASE_KIND", "seed_phrases"]

PHRASE_KIND = "seed_phrase"
_MIN_WORDS = 12
_GAP_LIMIT = 6  # "\n12. " between two words of a numbered list
_STRETCH = b"a" * 55
# a newline may come escaped ("\\n": a JSON string inside text): the letter after a backslash is no word
_TABLE = bytes(ord("a") if chr(b) in string.ascii_lowercase + string.digits + " \t\r\n.)-\\" else ord(" ")
               for b in range(256))
# A phrase is looked for in a text short enough to be one pasted alone, or in one that names it: in
# every text, the stretches of prose cost the hook path a third more (benchmarks/sanitizer.py).
_ALONE = 512
_HINTS = ("mnemonic", "wallet", "seed", "recovery")  # each `in` costs a 2 KB text a microsecond
_WORD = re.compile(r"(?<!\\)[A-Za-z]+")


@functools.cache
def _wordlist() -> frozenset[str]:
    from mnemonic import Mnemonic  # only a text with a stretch of words pays for the import

    return frozenset(Mnemonic("english").wordlist)


def seed_phrases(text: str) -> list[Found]:
    """(start, end, kind) of every run of twelve or more BIP39 words in ``text``."""
    if len(text) > _ALONE:
        low = text.lower()
        if not any(hint in low for hint in _HINTS):
            return []
    found: list[Found] = []
    for start, end in _stretches(text.encode("ascii", "replace").translate(_TABLE)):  # a byte a character
        if _gaps(text, start, end) >= _MIN_WORDS - 1:  # most stretches of prose hold ten words or fewer
            # a word glued to a list's punctuation ("yellow.", "1.abandon") is not counted here: 2 spare
            words = _wordlist()
            if sum(map(words.__contains__, text[start:end].replace("\\n", " ").split())) >= _MIN_WORDS - 2:
                found += _runs(text, start, end, words)
    return found


def _stretches(data: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of 55 or more b"a" in data. Prose is nearly all one run of them
    broken by a few hundred others, where find tries every place (its needle is one byte repeated)
    and split makes few pieces; code is broken everywhere, where split makes a thousand pieces and
    find skips 56 bytes at a time."""
    if data.count(b" ") < 256:
        start = 0
        for piece in data.split(b" "):
            if len(piece) >= len(_STRETCH):
                yield start, start + len(piece)
            start += len(piece) + 1
        return
    start = data.find(_STRETCH)
    while start >= 0:
        end = data.find(b" ", start + len(_STRETCH))
        end = len(data) if end < 0 else end
        yield start, end
        start = data.find(_STRETCH, end)


def _gaps(text: str, start: int, end: int) -> int:
    """How many separators could stand between words in text[start:end] (counted in C)."""
    return text.count(" ", start, end) + text.count("\n", start, end) + text.count("\\n", start, end)


def _runs(text: str, start: int, end: int, words: frozenset[str]) -> list[Found]:
    found: list[Found] = []
    run: list[re.Match[str]] = []
    for word in _WORD.finditer(text, start, end):
        listed = word.group(0) in words
        if listed and run and word.start() - run[-1].end() <= _GAP_LIMIT:
            run.append(word)
            continue
        found += _phrase(run)
        run = [word] if listed else []
    return found + _phrase(run)


def _phrase(run: list[re.Match[str]]) -> list[Found]:
    """The run as a phrase, if it is one: twelve words or more, two thirds of twelve of them
    different ("very very very …" is emphasis; a phrase drawn from 2048 words rarely repeats)."""
    if len(run) < _MIN_WORDS or len({w.group(0) for w in run}) < _MIN_WORDS * 2 // 3:
        return []
    return [(run[0].start(), run[-1].end(), PHRASE_KIND)]
