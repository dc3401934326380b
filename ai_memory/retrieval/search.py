"""Answering a query: streams → reciprocal-rank fusion → authority → local reranker → evidence.

Also: scope (current project plus ``_global`` by default), filters (kind, scope, superseded,
expired, min_score), ``as_of`` over the page history, ``raw_hits`` from observations when pages
miss, and ``explain`` with every number that made a score.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from typing import Any, Callable

from ai_memory.core.clock import end_of_day, utc_iso
from ai_memory.core.errors import AiMemoryError
from ai_memory.core.events import SESSION_MARKERS, is_markdown_event
from ai_memory.core.names import project_name
from ai_memory.core.page import GLOBAL_PROJECT, TYPE_OF_KIND
from ai_memory.core.timeexpr import parse_ranges, without_dates
from ai_memory.core.users import visible_to
from ai_memory.core.wire import Hit, RawHit
from ai_memory.embed.model import Embedder, Tokens
from ai_memory.retrieval import late_interaction, rerank
from ai_memory.retrieval.features import FEATURES, FORMULA, Candidate, Feature, combine
from ai_memory.retrieval.features import weights as feature_weights
from ai_memory.retrieval.fts import (
    TermStats, match_expression, page_term_stats, parts_snippet, query_terms, query_words, search_observations,
    snippet_of,
)
from ai_memory.retrieval.confidence import MEANING_STREAMS, confidence, meaning_of
from ai_memory.retrieval.fusion import OWN_TURN, Fused, authority, fuse, top_ids
from ai_memory.retrieval.streams import (
    Stream, entity_stream, fts_stream, graph_stream, turn_text_hits, turn_text_stream, turn_vector_stream, vector_stream,
)
from ai_memory.retrieval.turns import (
    Turn, answer_text_of, best_of_turns, best_turns_of, evidence_of, most_wanted_first, passage_of, passage_sources,
    reached_turns, turn_texts,
)
from ai_memory.retrieval.session_map import SessionMap
from ai_memory.retrieval.vectors import VectorIndex
from ai_memory.store import search_rows
from ai_memory.store.history import versions_matching

# The kinds a search can filter on: every structured-memory kind, plus compiled sessions.
KIND_TYPES = TYPE_OF_KIND
# The reranker reads this many fused candidates (more when a query asks for more hits). Its cost
# grows with them, and past the 30th in fused order a candidate hardly ever came out first: on
# both development sets 30 ranked as well as 40 or better.
RERANK_DEPTH = 30

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Query:
    q: str
    project: str | None = None
    projects: tuple[str, ...] = ()
    all_projects: bool = False
    k: int = 10
    explain: bool = False
    as_of: str | None = None
    include_superseded: bool = False
    kinds: tuple[str, ...] = ()
    scope: str | None = None
    min_score: float | None = None
    owner: str | None = None
    profile: bool = False
    depth: int = RERANK_DEPTH  # fused candidates the reranker reads (fewer: faster, for a caller wanting a few)
    # Hits less confident than this come without snippet, highlights and evidence: a caller that
    # hands over only confident hits (prompt recall) reads no passage of the others.
    evidence_from: float | None = None


@dataclass
class Answer:
    hits: list[Hit] = field(default_factory=list)
    raw_hits: list[RawHit] = field(default_factory=list)
    streams_used: list[str] = field(default_factory=list)
    stages_ms: dict[str, float] = field(default_factory=dict)  # how long each stage took


class _Stages:
    """Times the stages of one search, one after the other (milliseconds)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self._last = time.perf_counter()

    def done(self, name: str) -> None:
        now = time.perf_counter()
        self.ms[name] = round(self.ms.get(name, 0.0) + (now - self._last) * 1000, 2)
        self._last = now


def scope_projects(query: Query) -> frozenset[str] | None:
    """The projects a query may see: those it names plus ``_global``; None for all (``all``, or
    no project named)."""
    if query.all_projects:
        return None
    named = {project_name(p) or p for p in (*query.projects, *([query.project] if query.project else []))}
    return frozenset(named | {GLOBAL_PROJECT}) if named else None


def in_scope(row: dict[str, Any], query: Query, projects: frozenset[str] | None, now: str) -> bool:
    """Whether the row passes every filter of the query; ``projects`` is its ``scope_projects``."""
    if projects is not None and row["project"] not in projects:
        return False
    if query.kinds and row["type"] not in {KIND_TYPES.get(k, k) for k in query.kinds}:
        return False
    fm = row.get("fm") or {}
    scope = fm.get("scope") or ("_global" if row["project"] == GLOBAL_PROJECT else "project")
    if query.scope and scope != query.scope:
        return False
    if not visible_to(query.owner, scope, fm.get("owner")):
        return False
    if row.get("superseded_by") and not query.include_superseded:
        return False
    if row.get("expires_at") and str(row["expires_at"]) <= now:
        return False
    return True

# A past version is matched by its text only: the features that text gives (the others are 0).
_TEXT_FEATURES = ("rrf", "page_text", "coverage", "phrase", "title")


# A reranked candidate: its hit, the texts its passage is made of (each with whether it is the
# page's own), its best turns and their texts.
Scored = tuple[Hit, list[tuple[str, bool]], list[int], dict[int, Turn]]


class Retriever:
    """Runs on a reader thread; owns nothing but references to the model and the vector cache."""

    def __init__(self, embedder: Embedder | None, index: VectorIndex | None, ready: Callable[[], bool],
                 features: tuple[Feature, ...] = FEATURES) -> None:
        self._embedder = embedder
        self._index = index
        self._ready = ready
        self._features = features  # the reranker's registry (another one only for an ablation)
        # The query's vectors are computed on a thread of their own while the search reads the
        # full-text indexes: the model and SQLite both let go of the GIL, so on a second core
        # the encoding (the largest single stage) costs a search only what the reading does not
        # cover. One thread: the query model encodes one text at a time anyway.
        self._encoder = ThreadPoolExecutor(1, thread_name_prefix="query-encode")
        self._sessions = SessionMap()
        self._pieces = late_interaction.PieceCache()

    def query_tokens(self, q: str) -> Tokens | None:
        """The query as the model reads it (pooled vector and piece vectors, one pass), without
        its calendar dates: no turn says "1 February, 2023", and the dates are matched against
        the memory's own (the temporal feature). None when the model cannot encode it: the
        search goes on by words alone."""
        if self._embedder is None or self._index is None or not self._ready():
            return None
        try:
            return self._embedder.encode_tokens([without_dates(q)])[0]
        except (RuntimeError, AiMemoryError) as exc:  # the runtime's own errors are RuntimeErrors
            log.error("the query could not be encoded (%s): searching by words alone", exc)
            return None

    def answer(self, conn: sqlite3.Connection, query: Query, now: datetime | None = None) -> Answer:
        moment = now or datetime.now(timezone.utc)
        if query.as_of:
            return self._as_of(conn, query)
        clock = _Stages()
        encoding = self._encoder.submit(self.query_tokens, query.q) if self._embedder is not None else None
        stats = page_term_stats(conn, query.q)
        projects = scope_projects(query)
        streams = [fts_stream(conn, query.q, stats, projects)]
        clock.done("page_fts")
        streams.append(entity_stream(conn, query.q, projects, stats=stats))
        clock.done("entities")
        turns_text, context = turn_text_stream(conn, query.q, turn_text_hits(conn, query.q, projects), self._sessions)
        clock.done("turns_fts")
        qtokens = encoding.result() if encoding is not None else None  # the text streams were read meanwhile
        qvec = qtokens.pooled if qtokens is not None else None
        clock.done("encode")  # what is left of it after the text streams
        if qvec is not None:
            streams.append(vector_stream(conn, self._index, qvec, projects))  # type: ignore[arg-type]
        clock.done("page_vectors")
        streams += [turns_text, turn_vector_stream(conn, self._index, qvec, projects, context, self._sessions)]
        clock.done("turns")
        own_turns = _without_turns(conn, streams)
        streams.append(graph_stream(conn, top_ids(streams, 5, own_turns)))
        streams = [s for s in streams if s.ranked]
        answer = Answer(streams_used=[s.name for s in streams])
        candidates, rows = candidates_of(conn, fuse(streams, own_turns), query, projects, moment)
        clock.done("graph_fuse_rows")
        scored = self._rerank(conn, query, candidates, rows, streams, stats, moment, qtokens)
        clock.done("rerank")
        if query.min_score is not None:
            scored = [s for s in scored if s[0]["score"] >= query.min_score]
        answer.hits = [presented(hit, parts, turns, texts, query.q) if _wanted(hit, query) else hit
                       for hit, parts, turns, texts in scored[: query.k]]
        clock.done("snippets")
        answer.stages_ms = clock.ms
        if not answer.hits:
            answer.raw_hits = raw_hits(conn, query)
        return answer

    def _rerank(self, conn: sqlite3.Connection, query: Query, candidates: list[Fused],
                rows: dict[int, dict[str, Any]], streams: list[Stream], stats: TermStats,
                now: datetime, qtokens: Tokens | None = None) -> list[Scored]:
        by_name = {s.name: s for s in streams}
        terms, words = query_terms(query.q), query_words(query.q)
        idf = {t: stats.idf(t) for t in terms}
        ranges = parse_ranges(query.q, now)
        top_rrf = max((c.rrf for c in candidates), default=1.0)
        ids = [c.page_id for c in candidates]
        scaled = _scaled_streams(by_name, ids)
        reached = reached_turns(by_name, ids)
        late = self._late_scores(conn, qtokens, most_wanted_first(
            {page_id: best_turns_of(by_name, page_id) for page_id in ids}, reached))
        best_turns = {page_id: best_turns_of(by_name, page_id, late=late) for page_id in ids}
        texts = turn_texts(conn, [r for turns in best_turns.values() for r in turns])
        if rerank.asks_why(query.q):  # the turn that gives the reason is the answer: it leads
            best_turns = {page_id: sorted(turns, key=lambda r: not rerank.gives_reason(texts[r].body)
                                          if r in texts else True) for page_id, turns in best_turns.items()}
        token_match, session_tokens = best_of_turns(late, best_turns), best_of_turns(late, reached)
        recorded = _recorded_sessions(conn, [rows[i]["session_id"] for i in ids if _is_session(rows[i])])
        measured = {name for name, values in (("turn_text", scaled["turns_fts"]),
                                              ("turn_vector", scaled["turns_vectors"]),
                                              ("token_match", token_match), ("session_tokens", session_tokens))
                    if values}
        meaning_measured = any(name in by_name for name in MEANING_STREAMS)
        out = []
        for cand in candidates:
            row = rows[cand.page_id]
            turns = best_turns[cand.page_id]
            passage = passage_of(row, turns, texts)
            facts = Candidate(
                row=row, rrf=cand.rrf / top_rrf, streams={k: v.get(cand.page_id, 0.0) for k, v in scaled.items()},
                late={"best": token_match.get(cand.page_id, 0.0), "reached": session_tokens.get(cand.page_id, 0.0)},
                passage=passage, terms=terms, words=words, idf=idf, ranges=ranges, question=query.q,
                answer_text=partial(answer_text_of, row, turns, texts))
            values = {f.name: f.value(facts) for f in self._features}
            has_turns = _is_session(row) and row["session_id"] in recorded
            imputed = [] if has_turns else sorted(measured)
            values = rerank.as_its_own_turn(values, imputed)
            weight = authority(row)
            score = combine(values, weight, self._features)
            sure = confidence(values.get("coverage", 0.0), values.get("title", 0.0), values.get("phrase", 0.0),
                              meaning_of(cand.found, meaning_measured), written=not has_turns)
            hit: Hit = {
                "path": row["path"], "title": row["title"], "type": row["type"], "score": round(score, 4),
                "confidence": round(sure, 4),
                "snippet": "", "highlights": [],  # filled in by ``presented`` for the hits returned only
                "session_id": row.get("session_id"), "project": row["project"], "updated": row.get("updated"),
                "evidence": [],
            }
            if query.explain:
                hit["explain"] = _explained(cand, values, weight, by_name, imputed, self._features)
            out.append((hit, passage_sources(row, turns, texts) if turns else [(row["body"], True)], turns, texts))
        out.sort(key=lambda h: -h[0]["score"])
        return out

    def _late_scores(self, conn: sqlite3.Connection, qtokens: Tokens | None, rowids: list[int]) -> dict[int, float]:
        """Late interaction for these turns, taken most wanted first (each candidate's best
        turns, then the other turns the streams reached) until the budget is spent: each
        query word matched to its closest word piece of the turn, words weighted by their
        rarity among turns. Empty without the model."""
        if qtokens is None or self._embedder is None or not rowids:
            return {}
        model = self._embedder.model_id
        words, vectors = late_interaction.content_pieces(qtokens)
        query = late_interaction.query_side(words, vectors, late_interaction.rarity(conn, model, words).idf)
        if query is None:
            return {}
        stored = late_interaction.stored_pieces(conn, model, rowids, len(words), self._pieces)
        return late_interaction.best_scores(query, stored, self._embedder.dim)

    def _as_of(self, conn: sqlite3.Connection, query: Query) -> Answer:
        """What the wiki knew at ``as_of``: each page's version valid then (the history is read
        from git), searched by text and scored by the same features, so its scores compare with
        a search's of today."""
        answer = Answer(streams_used=["history_fts"])
        expr = match_expression(query.q)
        if expr is None:
            return answer
        as_of = query.as_of or ""
        stamp = as_of if "T" in as_of else end_of_day(as_of)
        rows = versions_matching(conn, expr, stamp)
        terms, words, projects = query_terms(query.q), query_words(query.q), scope_projects(query)
        best = max((max(0.0, r["score"]) for r in rows), default=0.0) or 1.0
        for rank, r in enumerate(rows):
            row = dict(r)
            fm = {"scope": row.get("scope"), "owner": row.get("owner")}  # a version remembers its owner
            if not in_scope({**row, "fm": fm, "superseded_by": None}, query, projects, "9999"):
                continue
            facts = Candidate(
                row=row, rrf=1.0 / (rank + 1), streams={"fts": max(0.0, row["score"]) / best}, late={},
                passage=(row["title"] or "", row["summary"] or "", row["body"][:50_000]), terms=terms, words=words,
                idf={t: 1.0 for t in terms}, ranges=[], question=query.q)
            values = rerank.as_its_own_turn(
                {f.name: f.value(facts) for f in self._features if f.name in _TEXT_FEATURES}, ["turn_text"])
            shown = snippet_of(row["body"], words)
            hit: Hit = {
                "path": row["path"], "title": row["title"], "type": row["type"],
                "score": round(combine(values, 1.0, self._features), 4),
                "confidence": round(confidence(values.get("coverage", 0.0), values.get("title", 0.0),
                                               values.get("phrase", 0.0), None, written=not _is_session(row)), 4),
                "snippet": shown["snippet"], "highlights": shown["highlights"], "session_id": None,
                "project": row["project"],
                "updated": row["valid_from"], "valid_from": row["valid_from"], "valid_to": row["valid_to"],
                "superseded_by": row["superseded_by"], "evidence": [],
            }
            if query.explain:
                hit["explain"] = {"streams": {"history_fts": {"rank": rank + 1}}, "bm25": round(row["score"], 4),
                                  "features": {k: round(v, 4) for k, v in values.items()},
                                  "weights": feature_weights(self._features), "authority": 1.0,
                                  "formula": FORMULA + "; a past version is matched by its text only (no"
                                             " vectors, turns or authority then): page_text is its BM25 over"
                                             " the best version's and stands for the best turn's"}
            answer.hits.append(hit)
            if len(answer.hits) >= query.k:
                break
        answer.hits.sort(key=lambda h: -h["score"])
        return answer


def presented(hit: Hit, parts: list[tuple[str, bool]], turns: list[int], texts: dict[int, Any], q: str) -> Hit:
    """A returned hit's snippet, highlights and evidence: made for the k hits returned, not for
    every candidate the reranker scored (reading a long page's markdown for its snippet cost
    more than the ranking itself). ``parts``: the page's body, or a session's title and turns,
    each read on its own (the turns shown as evidence are then read once), with whether it is
    markdown (a tool call's code and output are shown as they are)."""
    words = query_words(q)
    shown = snippet_of(parts[0][0], words, markdown=parts[0][1]) if len(parts) == 1 \
        else parts_snippet([text for text, _ in parts], words, markdown=[md for _, md in parts])
    hit["snippet"], hit["highlights"] = shown["snippet"], shown["highlights"]
    hit["evidence"] = evidence_of(turns, texts, words)
    return hit


def _wanted(hit: Hit, query: Query) -> bool:
    """Whether the hit's passage is read for its snippet and evidence (``Query.evidence_from``)."""
    return query.evidence_from is None or hit["confidence"] >= query.evidence_from


def _scaled_streams(by_name: dict[str, Stream], ids: list[int]) -> dict[str, dict[int, float]]:
    """Each stream's scores over this search's candidates: BM25 as fractions of the best, the
    others between the worst and the best."""
    return {"turns_fts": _relative_to_best(by_name.get("turns_fts"), ids),
            "turns_vectors": _normalized(by_name.get("turns_vectors"), ids),
            "vectors": _normalized(by_name.get("vectors"), ids),
            "fts": _relative_to_best(by_name.get("fts"), ids)}


def _explained(cand: Fused, values: dict[str, float], weight: float, by_name: dict[str, Stream],
               imputed: list[str], features: tuple[Feature, ...]) -> dict[str, Any]:
    """Every number that made a candidate's score."""
    def detail(name: str) -> list[Any]:
        return by_name[name].detail.get(cand.page_id, []) if name in by_name else []

    return {"streams": cand.ranks, "rrf": round(cand.rrf, 6), "authority": round(weight, 3),
            "features": {k: round(v, 4) for k, v in values.items()}, "weights": feature_weights(features),
            "matched_entities": detail("entities"), "edges": detail("graph"), "imputed": imputed,
            "formula": FORMULA}


def _is_session(row: dict[str, Any]) -> bool:
    return row["type"] == "Session Summary" and bool(row.get("session_id"))


def _without_turns(conn: sqlite3.Connection, streams: list[Stream]) -> set[int]:
    """The pages the page streams found that have no recorded turns for the turn streams to
    find (written pages, and sessions without recorded events): each is its own turn in the
    fusion (``fusion.OWN_TURN``). Nothing to look up while the turn streams found nothing."""
    by_name = {s.name: s for s in streams}
    if not any(by_name.get(name) and by_name[name].ranked for name in OWN_TURN.values()):
        return set()
    ids = sorted({i for name in OWN_TURN for i in (by_name[name].ranked if name in by_name else [])})
    if not ids:
        return set()
    pages: list[dict[str, Any]] = [{"id": page_id, "type": kind, "session_id": session_id}
                                   for page_id, kind, session_id in search_rows.page_kinds(conn, ids)]
    recorded = _recorded_sessions(conn, [p["session_id"] for p in pages if _is_session(p)])
    return {p["id"] for p in pages if not (_is_session(p) and p["session_id"] in recorded)}


def _recorded_sessions(conn: sqlite3.Connection, session_ids: list[str]) -> set[str]:
    """The sessions with at least one recorded event besides their start and end: those whose
    turns are evidence. A session page without (written by hand, imported, or its events
    forgotten) is scored like any written page."""
    if not session_ids:
        return set()
    return search_rows.sessions_with_events(conn, session_ids, sorted(SESSION_MARKERS))


def candidates_of(conn: sqlite3.Connection, fused: list[Fused], query: Query, projects: frozenset[str] | None,
                  now: datetime) -> tuple[list[Fused], dict[int, dict[str, Any]]]:
    """The first max(query.depth, k) fused pages that pass the query's filters, looked for among
    the first three times that many, and their rows. Rows are read a slice at a time, best fused
    first: most pages pass, and reading every row of the three times as many cost more than
    fusing the streams."""
    stamp = utc_iso(now)
    depth = max(query.depth, query.k)
    rows: dict[int, dict[str, Any]] = {}
    found: list[Fused] = []
    considered = fused[: depth * 3]
    for start in range(0, len(considered), depth + _ROW_SPARE):
        part = considered[start:start + depth + _ROW_SPARE]
        rows.update(_page_rows(conn, [f.page_id for f in part]))
        found += [f for f in part if f.page_id in rows and in_scope(rows[f.page_id], query, projects, stamp)]
        if len(found) >= depth:
            break
    return found[:depth], rows


_ROW_SPARE = 8  # rows read beyond the depth, for the pages a filter leaves out


def _page_rows(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, Any]]:
    if not ids:
        return {}
    cursor = search_rows.candidate_rows(conn, ids)  # plain tuples, made into dicts once
    names = [d[0] for d in cursor.description]
    out = {}
    for values in cursor:
        row = dict(zip(names, values))
        row["fm"] = json.loads(row.pop("frontmatter") or "{}")
        out[int(row["id"])] = row
    return out


# Cosines of a few candidates often lie within a few hundredths of each other (two sessions
# over the same code); spread over the whole [0, 1], such a difference, which says nothing,
# would outweigh every other feature. Candidates closer than this are scaled as if this far apart.
COSINE_SPREAD = 0.1


def _normalized(stream: Stream | None, ids: list[int]) -> dict[int, float]:
    """The stream's cosines for these candidates scaled to [0, 1] (the best 1; the worst 0, or
    more when all lie within COSINE_SPREAD); absent candidates get 0."""
    if stream is None:
        return {}
    return rerank.normalize({i: stream.scores[i] for i in ids if i in stream.scores}, COSINE_SPREAD)


def _relative_to_best(stream: Stream | None, ids: list[int]) -> dict[int, float]:
    """BM25 scores as fractions of the best candidate's: zero means no match, so the weakest
    match keeps its worth instead of sinking to the level of no match at all (as min-max
    scaling would have it), and a near tie stays near."""
    if stream is None:
        return {}
    found = {i: max(0.0, stream.scores[i]) for i in ids if i in stream.scores}
    best = max(found.values(), default=0.0)
    return {i: s / best for i, s in found.items()} if best > 0 else {}


def raw_hits(conn: sqlite3.Connection, query: Query) -> list[RawHit]:
    """Observations matching the text, for when no page does (bounded)."""
    words = query_words(query.q)
    out: list[RawHit] = []
    projects = scope_projects(query)
    for hit in search_observations(conn, query.q, limit=query.k * 3, projects=projects):
        r = search_rows.observation_hit(conn, hit.rowid)
        # FTS matches a project by its words (any case, stemmed): the exact name decides.
        if r is None or (projects is not None and r["project"] not in projects):
            continue
        shown = snippet_of(r["body"], words, markdown=is_markdown_event(r["event"]))
        out.append({"id": r["id"], "session_id": r["session_id"], "project": r["project"], "event": r["event"],
                    "occurred_at": r["occurred_at"], "score": round(hit.score, 4), **shown})
        if len(out) >= query.k:
            break
    return out
