"""The full-text stream: FTS5 queries built from natural language or identifiers.

A query is analysed as the index is (``core.terms``: words stemmed, identifiers whole and
split into their parts); the terms are OR-joined (BM25 rewards pages matching more of them),
stopwords dropped for natural-language queries, and identifiers kept whole are also matched
by prefix.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ai_memory.core.readable import CACHED_CHARS, readable, readable_prefixes
from ai_memory.core.terms import STOPWORDS, is_stopword, query_words, token_terms
from ai_memory.core.wire import Snippet
from ai_memory.store import text_search
from ai_memory.store.observations import newest_observation_rowid
from ai_memory.store.pages import newest_page_id

__all__ = ["STOPWORDS", "FtsHit", "TermStats", "common_turn_terms", "is_content_word", "make_snippet",
           "match_expression", "page_count", "page_term_stats", "parts_snippet", "query_terms", "query_words",
           "search_observations", "search_pages", "snippet_of"]

_IDENTIFIER = re.compile(r"[_.-]")  # an analysed term that is an identifier or a path segment kept whole
# Weights for the columns of pages_fts(title, summary, body, project): the project column is
# for scoping, never for the words.
PAGE_WEIGHTS = (4.0, 2.0, 1.0, 0.0)
_PAGE_TEXT = "{title summary body}"
PREFIX_SHARE, PREFIX_PAGES = 0.02, 50  # see TermStats.found_whole


@dataclass(frozen=True)
class FtsHit:
    rowid: int
    score: float  # higher is better (negated bm25)


def make_snippet(text: str, terms: list[str], width: int = 160, markdown: bool = True) -> str:
    """A window of ``text``'s words (``core.readable``: no markdown or JSON syntax; code, not
    ``markdown``, as written) around the first query term found as a whole word;
    ``highlights`` marks the terms in it. A long text
    is read only as far as the window needs (``readable_prefixes``): the same window as if it
    had been read whole, at a fraction of the markdown parsing. A text short enough for
    ``readable``'s memory is read whole once, there: the turns a search shows come back as
    evidence, in passages and in the next search.

    Done here rather than with FTS5's snippet(), which is quadratic in the number of matches
    (seconds on a page that repeats a word thousands of times).
    """
    text = text[:200_000]
    if len(text) <= CACHED_CHARS or not markdown:
        return _window([(readable(text, markdown), True)], terms, width)
    # Where the first term stands in the text as written says how far to read at least (the
    # words read are never further on than the text they come from); no term: all of it.
    lowered = text.lower()
    written = [i for i in (lowered.find(t.lower()) for t in terms if t) if i >= 0]
    return _window(readable_prefixes(text, min(written) + 2 * width if written else len(text)), terms, width)


def parts_snippet(parts: list[str], words: list[str], width: int = 160,
                  markdown: Sequence[bool] = ()) -> Snippet:
    """``snippet_of`` for a passage made of separate texts (a title, then turns), each read as
    the text it is (``markdown``: whether each is; all are if not given) and only as far as
    the window needs; their words joined by a space."""
    return _highlighted(_window(_joined_prefixes(parts, markdown), words, width), words)


def _joined_prefixes(parts: list[str], markdown: Sequence[bool]) -> Iterator[tuple[str, bool]]:
    head = ""
    for i, part in enumerate(parts):
        said = readable(part, markdown[i] if markdown else True)
        head = f"{head} {said}" if head and said else head or said
        yield head, i == len(parts) - 1


def _window(heads: Iterable[tuple[str, bool]], terms: list[str], width: int) -> str:
    """The snippet from ever longer beginnings of a text's words (``True``: the whole): the first
    beginning that holds a term and the window after it decides."""
    for head, whole in heads:
        found = _first_word(head, terms)
        if found is None:
            if whole:
                return head[:width].rstrip()
            continue
        start = max(0, found - width // 3)
        if start:  # begin at a word
            space = head.rfind(" ", 0, start)
            start = space + 1 if space != -1 and found - space <= width // 2 else start
        if whole or start + width <= len(head):
            return ("… " if start else "") + head[start:start + width].rstrip()
    return ""  # not reached: the whole text comes last


def _first_word(text: str, terms: list[str]) -> int | None:
    """Where the first whole-word occurrence of any term begins: one pass over the text (a
    search for an alternation stops at the leftmost position where any term matches)."""
    pattern = _any_word_pattern(tuple(t for t in terms if t))
    found = pattern.search(text) if pattern is not None else None
    return found.start() if found else None


@lru_cache(maxsize=256)
def _every_word_pattern(longest_first: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pass finding, at every place where a term stands as a whole word, the longest one
    there (a lookahead consumes nothing, so terms that overlap are all found)."""
    if not longest_first:
        return None
    return re.compile(rf"(?<![\w])(?=({'|'.join(re.escape(t) for t in longest_first)})(?![\w]))", re.I)


@lru_cache(maxsize=256)
def _any_word_pattern(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    if not terms:
        return None
    return re.compile(rf"(?<![\w])(?:{'|'.join(re.escape(t) for t in terms)})(?![\w])", re.I)


def highlights(snippet: str, terms: list[str]) -> list[list[int]]:
    """[start, end] of each whole-word occurrence of a query term in ``snippet`` ("CA" marks
    no part of "replica"; overlapping ones, as "1.1" twice in "1.1.1", merged), in order."""
    pattern = _every_word_pattern(tuple(sorted({t for t in terms if t}, key=lambda t: (-len(t), t))))
    spans = [m.span(1) for m in pattern.finditer(snippet)] if pattern is not None else []
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def snippet_of(text: str, words: list[str], width: int = 160, markdown: bool = True) -> Snippet:
    """A hit's readable snippet and where the query's words are in it."""
    return _highlighted(make_snippet(text, words, width, markdown), words)


def _highlighted(snippet: str, words: list[str]) -> Snippet:
    return {"snippet": snippet, "highlights": highlights(snippet, words)}


def query_terms(text: str) -> list[str]:
    """The query's distinct search terms, analysed as the index is: stopwords and lone letters
    dropped unless nothing else is left (a possessive's "s" too: it matches nearly every
    text and only adds noise to BM25); digits stay ("1 May"). (A name's stopword parts stay:
    the "with" of with_name tells it from the other methods on names.)"""
    out: dict[str, None] = {}
    for word in query_words(text):
        out.update(dict.fromkeys(token_terms(word)))
    return list(out)[:32]


def is_content_word(word: str) -> bool:
    """A word a search weighs: not a stopword, punctuation or a lone letter (digits stay)."""
    return any(ch.isalnum() for ch in word) and not is_stopword(word) and (len(word) > 1 or word.isdigit())


def match_expression(text: str, skip: frozenset[str] = frozenset(), word_prefixes: bool = True,
                     whole_only: frozenset[str] = frozenset()) -> str | None:
    """An FTS5 MATCH expression: quoted terms OR-joined; identifiers, and with ``word_prefixes``
    words of four letters or more, also by prefix, so the short forms people type find the long
    ones ("config" finds "configuration", "auth" finds "authentication"), which stemming does
    not. Terms in ``skip`` are left out, those in ``whole_only`` are not matched by prefix.
    """
    parts = []
    for term in query_terms(text):
        if term in skip:
            continue
        quoted = _quoted(term)
        parts.append(quoted)
        if term not in whole_only and (_IDENTIFIER.search(term) or (word_prefixes and len(term) >= 4)):
            parts.append(quoted + "*")
    return " OR ".join(parts) if parts else None


@dataclass(frozen=True)
class TermStats:
    """How many pages hold each query term, and how many pages there are."""

    pages: int
    df: dict[str, int]

    def idf(self, term: str) -> float:
        return math.log((self.pages + 1) / (self.df.get(term, 0) + 0.5))

    def common(self) -> frozenset[str]:
        """Terms on more than half the pages. BM25 gives them no weight (FTS5 floors their IDF
        at 1e-6), yet OR-matching them makes FTS5 score most of the table: leaving them out of
        the MATCH changes no score and keeps a query's cost to the rows that can rank."""
        if self.pages < 20:
            return frozenset()
        return frozenset(t for t, n in self.df.items() if n > self.pages / 2)

    def found_whole(self) -> frozenset[str]:
        """Terms on more than PREFIX_SHARE of the pages, and on more than PREFIX_PAGES, as they
        are. Their prefix would add the pages with a longer form, at a weight BM25 makes small
        (a prefix is as common as its most common form), and it costs the most: FTS5 reads the
        doclist of every term the prefix begins, so on a large memory the prefixes of common
        words were most of a search's full-text time. A small memory keeps every prefix."""
        least = max(PREFIX_PAGES, self.pages * PREFIX_SHARE)
        return frozenset(t for t, n in self.df.items() if n > least)


# A memory of up to this many pages has each term's pages counted exactly. On a larger one a
# common term is counted among its newest PAGE_WINDOW pages and scaled to the whole.
PAGE_WINDOW = 20_000
EXACT_SHARE = 0.01  # a term on fewer of the window's pages than this share is counted over every page


def page_term_stats(conn: sqlite3.Connection, text: str, window: int = PAGE_WINDOW) -> TermStats:
    """How many pages hold each query term, counted by FTS itself (same tokenizer, same stems).
    Counting reads the term's doclist: well under a millisecond for a rare term, but 5-10 ms
    for one on most of 100,000 pages, and a question holds several. So past PAGE_WINDOW pages a
    common term's count is its share of the newest pages times the number of pages (a rare
    one, which costs little, is still counted exactly). BM25 computes its own counts; these
    weigh the reranker's coverage and say which terms are too common to match by prefix."""
    pages = page_count(conn)
    newest = newest_page_id(conn)
    since = newest - window if pages > window else None
    in_window = page_count(conn, since) if since is not None else 0
    df: dict[str, int] = {}
    for term in query_terms(text)[:24]:
        expr = f"{_PAGE_TEXT} : {_quoted(term)}"
        try:
            held = text_search.pages_matching(conn, expr, since) if since is not None and in_window else None
            df[term] = (round(held * pages / in_window) if held is not None and held >= window * EXACT_SHARE
                        else text_search.pages_matching(conn, expr, None))
        except sqlite3.OperationalError:
            df[term] = 0
    return TermStats(pages, df)


def page_count(conn: sqlite3.Connection, since: int | None = None) -> int:
    """How many pages there are (with an id above ``since``), read from the full-text index's
    own row sizes, a row per page: counting the pages table would read its rows, bodies and all."""
    return text_search.indexed_pages(conn, since)


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _scoped(expr: str, projects: Collection[str] | None) -> str | None:
    """``expr`` limited to rows of ``projects`` (None: all; empty: none) inside FTS5 itself, so a
    search costs what its scope holds, not the whole memory. FTS matches a project by its words
    (any case): callers that need the exact name check it on the row."""
    if projects is None:
        return expr
    if not projects:
        return None
    wanted = " OR ".join(_quoted(p) for p in sorted(projects))
    return f"project : ({wanted}) AND {expr}"


def search_pages(conn: sqlite3.Connection, text: str, limit: int = 50,
                 stats: TermStats | None = None, projects: Collection[str] | None = None) -> list[FtsHit]:
    """Pages by BM25 over title, summary and body, within ``projects`` (None: all)."""
    stats = stats or page_term_stats(conn, text)
    words = match_expression(text, stats.common(), whole_only=stats.found_whole()) or match_expression(text)
    expr = _scoped(f"{_PAGE_TEXT} : ({words})", projects) if words else None
    if expr is None:
        return []
    try:
        rows = text_search.bm25_pages(conn, expr, PAGE_WEIGHTS, limit)
    except sqlite3.OperationalError:
        return []
    return [FtsHit(rowid, score) for rowid, score in rows]


# Among this many newest observations, a term held by COMMON_SHARE of them is common. A memory
# with fewer observations keeps every term: its whole index costs less than the counting.
TURN_WINDOW, COMMON_SHARE = 50_000, 0.05
COUNTED_TERMS = 24  # a query's terms counted, as for pages; any after them are kept


def search_observations(conn: sqlite3.Connection, text: str, limit: int = 20,
                        projects: Collection[str] | None = None, window: int = TURN_WINDOW) -> list[FtsHit]:
    """Observations by BM25 over title and body; ``projects`` (None: all) bounds the search to
    those projects' observations inside FTS5 itself, so its cost follows the scope, not the
    size of the whole memory. Plain words are not matched by prefix here: over 100,000s of
    observations that pass costs more than the rest of a search, and the session pages, which
    hold the same prompts, are (the short form still finds the session). On a large memory the
    terms that most of the newest ``window`` observations hold are left out (``common_turn_terms``)."""
    words = match_expression(text, skip=common_turn_terms(conn, text, window), word_prefixes=False)
    # The project column is for scoping, never for the words.
    expr = _scoped(f"{{title body}} : ({words})", projects) if words else None
    if expr is None:
        return []
    try:
        rows = text_search.bm25_observations(conn, expr, limit)
    except sqlite3.OperationalError:
        return []
    return [FtsHit(rowid, score) for rowid, score in rows]


def common_turn_terms(conn: sqlite3.Connection, text: str, window: int = TURN_WINDOW) -> frozenset[str]:
    """The query's terms that a large share of observations hold (``src``, ``py``, ``service``
    across a million tool calls), to leave out of the turn search when a rarer term that some
    observation holds is kept. FTS5 scores every row that matches any term of an OR, so on a
    large memory such terms are most of a search's time, while BM25 gives them little weight
    (a term on 20% of the rows is worth a sixth of one on 0.02%) and the reranker still reads
    every query term in the passages it scores. When no kept term occurs anywhere, the common
    terms are all the search can find, so none is left out. Each term is counted among the
    newest ``window`` observations only, and only up to the share (a range of rowids in its
    doclist), so the counting stays small whatever the memory's size."""
    newest = newest_observation_rowid(conn)
    if newest <= window:
        return frozenset()
    enough = max(1, int(window * COMMON_SHARE))
    terms = query_terms(text)[:COUNTED_TERMS]
    held = {term: _turns_holding(conn, term, newest - window, enough) for term in terms}
    common = frozenset(term for term, n in held.items() if n >= enough)
    # A kept term absent from the window may still be in an older observation: one row says so.
    kept = [term for term, n in held.items() if 0 <= n < enough]
    return common if any(held[t] > 0 or _turns_holding(conn, t, 0, 1) > 0 for t in kept) else frozenset()


def _turns_holding(conn: sqlite3.Connection, term: str, after: int, most: int) -> int:
    """How many observations with a rowid above ``after`` hold ``term``, counted up to ``most``;
    -1 when FTS5 cannot read the term."""
    try:
        return text_search.observations_matching(conn, f"{{title body}} : {_quoted(term)}", after, most)
    except sqlite3.OperationalError:
        return -1
