"""Candidate streams: each ranks pages its own way (text, entities, links, vectors, turns).

A stream returns page ids best first with its own scores, plus what it matched (for explain
and for evidence). Every stream but the graph's one hop reads only the projects in the query's
scope, so other projects never take its places; the pipeline still checks every filter (kind,
superseded, private, the exact project) once for all.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ai_memory.core.entities import extract_entities, normalize_entity
from ai_memory.core.events import SESSION_MARKERS
from ai_memory.core.users import ADMIN
from ai_memory.core.terms import token_terms
from ai_memory.retrieval.fts import TermStats, page_count, query_words, search_observations, search_pages
from ai_memory.retrieval.session_map import SessionMap
from ai_memory.retrieval.vectors import VectorIndex
from ai_memory.store import page_graph, search_rows
from ai_memory.store.pages import session_pages
from ai_memory.store.users import user_names


@dataclass
class Stream:
    name: str
    ranked: list[int] = field(default_factory=list)
    scores: dict[int, float] = field(default_factory=dict)
    detail: dict[int, Any] = field(default_factory=dict)

    def add(self, page_id: int, score: float, detail: Any = None) -> None:
        if page_id not in self.scores:
            self.ranked.append(page_id)
            self.scores[page_id] = score
            if detail is not None:
                self.detail[page_id] = detail


def fts_stream(conn: sqlite3.Connection, q: str, stats: TermStats | None = None,
               projects: Collection[str] | None = None, limit: int = 100) -> Stream:
    stream = Stream("fts")
    for hit in search_pages(conn, q, limit, stats, projects):
        stream.add(hit.rowid, hit.score)
    return stream


_NAME_SHAPED = re.compile(r"[_./:@#-]|\d|[a-z][A-Z]")


def query_entities(q: str) -> tuple[set[str], set[str]]:
    """The names a query asks about: those the entity rules find in it (a capitalised name, a
    path, an identifier, a package) or shaped like one even in lower case (``kw_only``,
    ``url.py``, ``py3``); and apart, its plain words, which are names only where the memory
    uses them as names (``entity_stream``)."""
    found = {normalize_entity(e) for e in extract_entities(q)}
    words = {w.lower() for w in query_words(q) if len(w) > 2}
    found |= {w for w in words if _NAME_SHAPED.search(w)}
    return {e for e in found if e}, words - found


# A plain word is a name in this memory when most pages that use it hold it as an entity
# ("kubernetes", "postgres"); "improve" or "release", on pages far more often than among
# their names, are words, and the text streams already match them.
NAME_SHARE = 0.5


def entity_stream(conn: sqlite3.Connection, q: str, projects: Collection[str] | None = None,
                  limit: int = 100, stats: TermStats | None = None) -> Stream:
    """Pages sharing the query's entities, each entity weighted by its rarity, inverse page
    frequency over the whole wiki, among the pages of ``projects`` (None: all). ``stats``
    (the query's term counts) tell which plain words are used as names."""
    stream = Stream("entities")
    names, words = query_entities(q)
    wanted = sorted(names | words)[:64]
    if not wanted:
        return stream
    total = max(1, stats.pages if stats is not None else page_count(conn))
    df = page_graph.entity_page_counts(conn, wanted)
    used = {w: (stats.df.get(token_terms(w)[0], 0) if stats is not None else 0) for w in words}
    # An entity on every other page says nothing, and reading its rows would cost the most.
    telling = [e for e in wanted if 0 < df.get(e, 0) and (df[e] <= total * 0.5 or total <= 20)
               and (e in names or df[e] >= NAME_SHARE * used.get(e, 0))]
    if not telling:
        return stream
    scores: dict[int, float] = defaultdict(float)
    matched: dict[int, list[str]] = defaultdict(list)
    for page_id, entity in page_graph.entity_pages(conn, telling, projects):
        scores[page_id] += math.log(1 + total / df[entity])
        matched[page_id].append(entity)
    for page_id, score in sorted(scores.items(), key=lambda kv: -kv[1])[:limit]:
        stream.add(page_id, score, sorted(matched[page_id]))
    return stream


def _resolve_targets(conn: sqlite3.Connection, target: str) -> list[int]:
    """A link target ([[x]], [[project:path]], relative .md) to page ids."""
    name = target.replace(":", "/", 1) if ":" in target and "/" not in target.split(":", 1)[0] else target
    name = name.removesuffix(".md")
    return page_graph.pages_named(conn, name, name.rsplit("/", 1)[-1].lower())


def _names_of(path: str, title: str | None) -> set[str]:
    """The link targets that mean this page: its path (with and without .md), stem, title,
    and the cross-project form ``project:rest``."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    project = path.split("/", 1)[0]
    names = {path, path.removesuffix(".md"), stem, f"{project}:{path.split('/', 1)[-1].removesuffix('.md')}"}
    return names | ({title} if title else set())


def page_links(conn: sqlite3.Connection, page_id: int) -> dict[str, list[dict[str, Any]]]:
    """The pages a page links to (each target with what it resolves to) and the pages linking to
    it, resolved as the graph stream resolves them."""
    row = page_graph.page_name(conn, page_id)
    if row is None:
        return {"links": [], "backlinks": []}
    out = []
    for target, kind in page_graph.links_from(conn, page_id, by_target=True):
        ids = [i for i in _resolve_targets(conn, target) if i != page_id]
        paths = page_graph.page_paths(conn, ids) if ids else []
        out.append({"target": target, "kind": kind, "paths": paths})
    names = _names_of(*row)
    back = page_graph.linking_pages(conn, names, page_id)
    return {"links": out, "backlinks": [{"path": r[0], "title": r[1], "kind": r[2]} for r in back]}


def graph_stream(conn: sqlite3.Connection, seeds: list[int], limit: int = 50) -> Stream:
    """One hop over links and typed relations from the best seeds, both directions."""
    stream = Stream("graph")
    found: dict[int, tuple[float, list[str]]] = {}
    for rank, seed in enumerate(seeds):
        weight = 1.0 / (rank + 1)
        row = page_graph.page_name(conn, seed)
        if row is None:
            continue
        for target, kind in page_graph.links_from(conn, seed):
            for page_id in _resolve_targets(conn, target):
                if page_id != seed:
                    score, kinds = found.get(page_id, (0.0, []))
                    found[page_id] = (score + weight, kinds + [f"{kind}->"])
        names = _names_of(*row)
        for src, kind in page_graph.links_to(conn, names):
            if src != seed:
                score, kinds = found.get(src, (0.0, []))
                found[src] = (score + weight, kinds + [f"<-{kind}"])
    for page_id, (score, kinds) in sorted(found.items(), key=lambda kv: -kv[1][0])[:limit]:
        stream.add(page_id, score, sorted(set(kinds)))
    return stream


def vector_stream(conn: sqlite3.Connection, index: VectorIndex, qvec: np.ndarray,
                  projects: Collection[str] | None = None, limit: int = 100) -> Stream:
    stream = Stream("vectors")
    for page_id, sim in index.search_pages(conn, qvec, limit, projects):
        stream.add(page_id, sim)
    return stream


# A turn is read in its context: an answer sits next to the question it answers, and a reply
# often says "yes, that one" about the turn before it. So each turn also earns a share of its
# best neighbour's score (the observations just before and after it in the same session).
CONTEXT_WEIGHT = 0.3


# The turns the text stream reads: each is looked up with its neighbours, so the cost of what
# follows grows with them; the 200 best by BM25 ranked both development sets as the 400 best did
# (the vector stream keeps 400: cosines are closer together, and 200 of them lost sessions).
TURN_TEXT_HITS = 200


def turn_text_hits(conn: sqlite3.Connection, q: str, projects: Collection[str] | None = None) -> dict[int, float]:
    """Observations matching the query's words, within ``projects`` (None: all): rowid -> BM25."""
    return {h.rowid: h.score for h in search_observations(conn, q, limit=TURN_TEXT_HITS, projects=projects)}


@dataclass
class TurnContext:
    """What the turn streams have looked up so far: the session of each matched observation
    and of its neighbours, and each of those sessions' page."""

    sessions_of: dict[int, str] = field(default_factory=dict)
    pages: dict[str, int] = field(default_factory=dict)
    named_users: frozenset[str] = frozenset()  # the team users the query names (read once a search)

    def extend(self, conn: sqlite3.Connection, rowids: list[int], sessions: SessionMap | None) -> None:
        """Look up these observations, their neighbours (content only: a session's start or
        end says nothing) and the pages of the sessions new among them."""
        lookup = partial(sessions.sessions_of, conn) if sessions is not None else partial(_obs_sessions, conn)
        unknown = [r for r in rowids if r not in self.sessions_of]
        if unknown:
            self.sessions_of.update(lookup(unknown))
        neighbours = {r + d for r in rowids for d in (-1, 1)} - self.sessions_of.keys()
        if neighbours:
            self.sessions_of.update(lookup(sorted(neighbours), content_only=True))
        self.pages.update(session_pages(conn, set(self.sessions_of.values()) - self.pages.keys()))


def turn_text_stream(conn: sqlite3.Connection, q: str, text_hits: dict[int, float],
                     sessions: SessionMap | None = None) -> tuple[Stream, TurnContext]:
    """The observations matching the query's words (``turn_text_hits``) in context, each
    session ranked by its best turn; and what was looked up for it, for ``turn_vector_stream``.
    A search builds it while the query is still being encoded.

    Both turn streams read only observations of the query's projects: turns outside its scope
    could only be dropped later, after taking the places of turns inside it. ``detail`` holds
    a session's matching observations [(rowid, score), ...], best first, for evidence and for
    late interaction. ``sessions``: the searcher's map of observations to sessions (without,
    SQLite is asked)."""
    context = TurnContext(named_users=named_users(conn, q))
    context.extend(conn, list(text_hits), sessions)
    return _turn_stream(conn, "turns_fts", text_hits, context), context


def turn_vector_stream(conn: sqlite3.Connection, index: VectorIndex | None, qvec: np.ndarray | None,
                       projects: Collection[str] | None, context: TurnContext,
                       sessions: SessionMap | None = None) -> Stream:
    """The observations nearest the query's vector in context, each session ranked by its best
    turn; ``context`` is the text stream's, extended by the vector matches."""
    vec_hits = (index.search_observations(conn, qvec, limit=400, projects=projects)
                if index is not None and qvec is not None else [])
    context.sessions_of.update((rowid, sid) for rowid, sid, _ in vec_hits)  # the index knows their sessions
    context.extend(conn, [rowid for rowid, _, _ in vec_hits], sessions)
    return _turn_stream(conn, "turns_vectors", {rowid: score for rowid, _, score in vec_hits}, context)


def _turn_stream(conn: sqlite3.Connection, name: str, hits: dict[int, float], context: TurnContext) -> Stream:
    stream = Stream(name)
    per_page: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for rowid, score in in_context(hits, context.sessions_of).items():
        page_id = context.pages.get(context.sessions_of.get(rowid, ""))
        if page_id is not None:
            per_page[page_id].append((rowid, score))
    by_named = search_rows.recorded_by(conn, context.named_users,
                                       [rowid for turns in per_page.values() for rowid, _ in turns])
    for page_id, turns in sorted(per_page.items(), key=lambda kv: -max(s for _, s in kv[1])):
        best = max(s for _, s in turns)
        turns = [(r, s * (AUTHOR_BOOST if r in by_named else 1.0)) for r, s in turns]
        turns.sort(key=lambda t: -t[1])
        stream.add(page_id, best, turns)
    return stream


# A question that names a person ("what did Alice paint?") is answered by what that person
# said: among a session's matching turns, those recorded by a team user the query names come
# first, as evidence and as the passage the reranker reads. The stream's own ranking of
# sessions is left as it was.
AUTHOR_BOOST = 1.5


def named_users(conn: sqlite3.Connection, q: str) -> frozenset[str]:
    """The team users the query names (never the admin, ``local``)."""
    words = {t.lower() for t in query_words(q)} - {ADMIN}
    users = user_names(conn) if words else []
    return frozenset(name for name in users if name.lower() in words)


def in_context(hits: dict[int, float], sessions_of: dict[int, str]) -> dict[int, float]:
    """Each turn's own score plus CONTEXT_WEIGHT times its best same-session neighbour's score.

    Neighbours are rowid +/- 1: observations are stored in arrival order, and the session check
    keeps concurrent sessions apart. A turn that did not match at all can still rank by context.
    """
    out: dict[int, float] = {}
    for rowid in set(hits) | {r + d for r in hits for d in (-1, 1)}:
        sid = sessions_of.get(rowid)
        if sid is None:
            continue
        near = 0.0
        for n in (rowid - 1, rowid + 1):
            score = hits.get(n)
            if score is not None and score > near and sessions_of.get(n) == sid:
                near = score
        score = hits.get(rowid, 0.0) + CONTEXT_WEIGHT * near
        if score > 0:
            out[rowid] = score
    return out


def _obs_sessions(conn: sqlite3.Connection, rowids: list[int], content_only: bool = False) -> list[tuple[int, str]]:
    """(rowid, session id) of these observations; ``content_only`` leaves out session start and
    end markers, which say nothing and so are no context for a neighbouring match."""
    skip = SESSION_MARKERS if content_only else frozenset()
    return [(rowid, session) for rowid, session, event in search_rows.observation_sessions(conn, rowids)
            if event not in skip]
