"""Secrets written as words: BIP39 seed phrases, 12 to 24 words of one list of 2048, which a
wallet turns back into its keys. No pattern of characters tells them from prose; the list does.

The list is the one of the ``mnemonic`` package (Trezor's reference implementation of BIP39),
loaded on first need. Cheap first: twelve words of 3 to 8 letters fill 47 or more characters
holding only letters, spaces and a list's numbering, so ``bytes.translate`` and ``find`` locate
such stretches at C speed, and only their words are looked up. Twelve listed words in a row, eight
of them different, are a phrase, checksum or not (one mistyped word still gives the wallet away).
Layer 0: pure.
"""

from __future__ import annotations

import functools
import re
import string

from ai_memory.core.secret_shapes import Found

__all__ = ["PHRASE_KIND", "seed_phrases"]

PHRASE_KIND = "seed_phrase"
_MIN_WORDS = 12
_GAP_LIMIT = 6  # "\n12. " between two words of a numbered list
_STRETCH = b"a" * (_MIN_WORDS * 3 + _MIN_WORDS - 1)
# a newline may come escaped ("\\n", a JSON string inside text): the letter after a backslash is no word
_TABLE = bytes(ord("a") if chr(b) in string.ascii_letters + string.digits + " \t\r\n,.)-\\" else ord(" ")
               for b in range(256))
_WORD = re.compile(r"(?<!\\)[A-Za-z]+")


@functools.cache
def _wordlist() -> frozenset[str]:
    from mnemonic import Mnemonic  # only a text with a stretch of words pays for the import

    return frozenset(Mnemonic("english").wordlist)


def seed_phrases(text: str) -> list[Found]:
    """(start, end, kind) of every run of twelve or more BIP39 words in ``text``."""
    data = text.encode("ascii", "replace").translate(_TABLE)  # one byte per character
    start = data.find(_STRETCH)
    found: list[Found] = []
    while start >= 0:
        end = data.find(b" ", start + len(_STRETCH))
        end = len(data) if end < 0 else end
        found += _runs(text, start, end)
        start = data.find(_STRETCH, end)
    return found


def _runs(text: str, start: int, end: int) -> list[Found]:
    words = _wordlist()
    found: list[Found] = []
    run: list[re.Match[str]] = []
    for word in _WORD.finditer(text, start, end):
        listed = word.group(0).lower() in words
        if listed and run and word.start() - run[-1].end() <= _GAP_LIMIT:
            run.append(word)
            continue
        found += _phrase(run)
        run = [word] if listed else []
    return found + _phrase(run)


def _phrase(run: list[re.Match[str]]) -> list[Found]:
    """The run as a phrase, if it is one: twelve words or more, two thirds of twelve of them
    different ("very very very …" is emphasis; a phrase drawn from 2048 words rarely repeats)."""
    if len(run) < _MIN_WORDS or len({w.group(0).lower() for w in run}) < _MIN_WORDS * 2 // 3:
        return []
    return [(run[0].start(), run[-1].end(), PHRASE_KIND)]
