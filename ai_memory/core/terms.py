"""Terms: how text becomes the words a search counts. One analysis, for the full-text index,
the query and the reranker alike, so a word is matched the same way everywhere.

A plain word is lower-cased and stemmed (the Snowball English stemmer, one for everything):
"updating", "updated" and "updates" are one term. Code is read as code. An identifier in any
of its shapes (``snake_case``, ``camelCase``, ``PascalCase``, ``__dunder__``, ``kebab-case``,
``dotted.names``) is kept whole, in lower case and unstemmed, and also split into its parts,
each stemmed: ``update_query`` is found by "update query", by "updating the query" and by
``update_query``, and the whole name, rarer than its parts, weighs the most. A dotted path
also gives the names inside it, whole: ``yarl.URL.with_name`` holds ``with_name``, the name the
code defines and calls, so the path a sentence writes meets the ``def`` an edit holds. A file
path gives its segments, each read like an identifier (``yarl/_url.py``: ``yarl``, ``_url.py``,
``_url``, ``url``, ``py``). Numbers and versions stay as written (``1.7.1``, ``3.11``), and a
version written inside a name gives the version too: a tag ``v1.7.1``, a build ``3.13t``, an
interpreter ``python3.11`` or a pre-release ``2.0rc1`` is found by the plain number.

Analysis is pure and cached per token: a page's words repeat across pages and queries.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

__all__ = ["STOPWORDS", "index_text", "is_stopword", "named_segments", "query_words", "stem", "terms", "token_terms",
           "words"]

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves did does done get got tell told said say says thing things
ever also like likely would could might much many one ones lot lots kind sort anything something
""".split())

MAX_CHARS = 200_000  # longer texts are analysed up to here
# A token: word characters, with . - / inside (never at an end, so a sentence's full stop or a
# dash between words stays out of it).
_TOKEN = re.compile(r"\w(?:[\w./-]*\w)?")
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b", re.I)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+[a-z]*|[a-z]+")
_NUMBER = re.compile(r"[\d.,-]+")
# Possessive: a hostile token of thousands of ".1" groups is read in one pass, never backtracked.
_VERSION = re.compile(r"(?<![\d.])\d++(?:\.\d++)++(?![\d.]*\d)")
_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=32768)
def stem(word: str) -> str:
    """A lower-case word's stem; a word holding a digit is left as it is."""
    if not word.isalpha() or len(word) < 3:
        return word
    return str(_STEMMER.stemWord(word))


def is_stopword(word: str) -> bool:
    return word.lower() in STOPWORDS


def _parts(name: str) -> list[str]:
    """The words an identifier is made of: split at _ - . and at case changes."""
    out: list[str] = []
    for piece in re.split(r"[_.\-]+", name):
        if piece:
            out += [p.lower() for p in _CAMEL.findall(piece)] if not piece.isdigit() else [piece]
    return out


def _is_identifier(token: str) -> bool:
    return any(c in token for c in "_.-") or (not token.islower() and not token.isupper()
                                              and any(c.islower() for c in token[1:]) and
                                              any(c.isupper() for c in token[1:]))


@lru_cache(maxsize=32768)
def token_terms(token: str) -> tuple[str, ...]:
    """The terms of one token (a match of the tokenizer): a plain word's stem, or an
    identifier whole and its stemmed parts, or a path's segments read the same way."""
    if "/" in token:
        out: list[str] = []
        for segment in token.split("/"):
            out += [t for t in token_terms(segment) if t not in out] if segment else []
        return tuple(out)
    lowered = token.lower()
    if _NUMBER.fullmatch(token):
        return (lowered,)
    if not _is_identifier(token):
        return (stem(lowered),)
    found = [lowered, *named_segments(token), *_VERSION.findall(lowered)] + [stem(p) for p in _parts(token)]
    return tuple(dict.fromkeys(t for t in found if t))


def named_segments(token: str) -> list[str]:
    """The names inside a dotted path, each whole and in lower case: ``yarl.URL.is_default_port``
    holds ``is_default_port``, the name the code defines and calls."""
    if "." not in token or "/" in token:
        return []
    return [segment.lower() for segment in token.split(".") if segment != token and _is_identifier(segment)]


def words(text: str) -> list[str]:
    """The text's tokens as written (possessive 's dropped), in order."""
    text = text[:MAX_CHARS]
    if "'" in text or "’" in text:  # the substitution scans every character; most texts have none
        text = _POSSESSIVE.sub("", text)
    return _TOKEN.findall(text)


def terms(text: str) -> list[str]:
    """Every term of the text in order (an identifier's whole before its parts)."""
    return [t for token in words(text) for t in token_terms(token)]


def index_text(text: str) -> str:
    """What the full-text index stores for a text: its terms, space-separated."""
    return " ".join(terms(text))


def query_words(text: str, limit: int = 32) -> list[str]:
    """A query's distinct words as written, stopwords dropped unless nothing else is left, and
    lone letters dropped (digits stay: "1 May")."""
    tokens = words(text)
    kept = [t for t in tokens if not is_stopword(t) and (len(t) > 1 or t.isdigit())]
    seen: dict[str, str] = {}
    for token in kept or tokens:
        seen.setdefault(token.lower(), token)
    return list(seen.values())[:limit]
