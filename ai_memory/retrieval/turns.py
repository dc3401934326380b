"""The turns a search reads for each candidate session: its best turns by the turn streams,
every turn of it they reached (in the order a budget spends them), and their texts, read once
a search, for passages, answers and evidence."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ai_memory.core.events import SESSION_MARKERS, is_markdown_event
from ai_memory.core.tool_text import edit_of
from ai_memory.retrieval import rerank
from ai_memory.retrieval.fts import snippet_of
from ai_memory.retrieval.streams import Stream
from ai_memory.store.search_rows import turn_rows


def best_of_turns(scores: dict[int, float], turns: Mapping[int, Collection[int]]) -> dict[int, float]:
    """Each candidate's best turn score, scaled to [0, 1] over the candidates. A session whose
    turns have no piece vectors (tool events, or turns the background job has not reached yet)
    is neither helped nor hurt: it gets the mean."""
    best = {page_id: max((scores[r] for r in found if r in scores), default=None) for page_id, found in turns.items()}
    matched = rerank.normalize({page_id: s for page_id, s in best.items() if s is not None})
    if matched:
        neutral = float(np.mean(list(matched.values())))
        matched.update({page_id: neutral for page_id, s in best.items() if s is None and turns[page_id]})
    return matched


def reached_turns(by_name: dict[str, Stream], ids: list[int]) -> dict[int, list[int]]:
    """The observations of each candidate the turn streams reached, best first by each stream
    in turn: matched by text or by meaning, or next to one that was."""
    return {page_id: taking_turns([[rowid for rowid, _ in by_name[name].detail.get(page_id, [])]
                                    for name in ("turns_fts", "turns_vectors") if name in by_name])
            for page_id in ids}


def most_wanted_first(best: dict[int, list[int]], reached: dict[int, list[int]]) -> list[int]:
    """Every candidate's best turns, then the other reached turns, the candidates taking turns
    (each one's next best): the order in which a search's budget of pieces is spent."""
    first = [r for turns in best.values() for r in turns]
    return list(dict.fromkeys([*first, *taking_turns(list(reached.values()))]))


def taking_turns(lists: list[list[int]]) -> list[int]:
    """The lists' items interleaved (the first of each, then the second of each, ...), each once."""
    return list(dict.fromkeys(item for tier in itertools.zip_longest(*lists) for item in tier if item is not None))


# A turn ranked r-th (from 0) by one of the votes gets 1/(TURN_VOTE_K + 1 + r) of it: the
# first few turns of each vote count, and a turn that every vote puts near the top leads.
TURN_VOTE_K = 3


def best_turns_of(by_name: dict[str, Stream], page_id: int, n: int = 3,
                  late: Mapping[int, float] | None = None) -> list[int]:
    """The page's best observations, by rank votes: the text stream's ranking of the page's
    turns, the vector stream's and, given ``late``, their late-interaction scores (each query
    word against the turn's words), each rank worth 1/(TURN_VOTE_K + 1 + rank), as streams are
    fused. Ranks rather than scores: within one session BM25 spreads its turns over a wide
    range and a cosine over a narrow one, so added scores let the text stream choose alone,
    and the turn that answers in other words lost to the one that repeats the question's.
    Ties go to the higher sum of scores, each scaled by its stream's best."""
    scaled: dict[int, float] = {}
    votes: dict[int, float] = {}
    for name in ("turns_fts", "turns_vectors"):
        stream = by_name.get(name)
        turns = stream.detail.get(page_id, []) if stream is not None else []
        top = (max(stream.scores.values()) or 1.0) if stream is not None and turns else 1.0
        for rowid, score in turns:
            scaled[rowid] = scaled.get(rowid, 0.0) + max(0.0, score) / top
        _vote(votes, [rowid for rowid, score in sorted(turns, key=lambda t: -t[1]) if score > 0])
    if late:
        _vote(votes, sorted((rowid for rowid in scaled if rowid in late), key=lambda rowid: -late[rowid]))
    return sorted(scaled, key=lambda rowid: (-votes.get(rowid, 0.0), -scaled[rowid]))[:n]


def _vote(votes: dict[int, float], ranked: list[int]) -> None:
    for rank, rowid in enumerate(ranked):
        votes[rowid] = votes.get(rowid, 0.0) + 1.0 / (TURN_VOTE_K + 1 + rank)


@dataclass(frozen=True)
class Turn:
    id: str
    session_id: str
    body: str
    event: str = ""

    @property
    def markdown(self) -> bool:
        return is_markdown_event(self.event)


def turn_texts(conn: sqlite3.Connection, rowids: Collection[int]) -> dict[int, Turn]:
    """These observations and their neighbours (rowid ± 1), read in one query: every turn a
    search's passages, evidence and answers are made of."""
    wanted = sorted({r + d for r in rowids for d in (-1, 0, 1)})
    return {rowid: Turn(obs_id, session_id, body, event)
            for rowid, obs_id, session_id, body, event in turn_rows(conn, wanted)}


def passage_of(row: dict[str, Any], turns: list[int], texts: dict[int, Turn]) -> rerank.Passage:
    """The best turns with their neighbours (a question and its answer sit side by side), or a
    page's title, summary and body."""
    if not turns:
        return (row["title"] or "", row["summary"] or "", row["body"][:50_000])
    return tuple(text for text, _ in passage_sources(row, turns, texts))


def passage_sources(row: dict[str, Any], turns: list[int], texts: dict[int, Turn]) -> list[tuple[str, bool]]:
    """The texts a session's passage is made of: the page's title, then each best turn with its
    neighbours, each turn once (best turns often stand side by side), each with whether it is
    markdown (a turn said, not a tool call)."""
    shown = dict.fromkeys(n for rowid in turns if rowid in texts for n in (rowid - 1, rowid, rowid + 1)
                          if n in texts and texts[n].session_id == texts[rowid].session_id)
    return [(row["title"], True), *((texts[n].body, texts[n].markdown) for n in shown)]


def answer_text_of(row: dict[str, Any], turns: list[int], texts: dict[int, Turn]) -> str:
    """Where the answer would be: a session's best turn, or the text of a page written as one
    (a compiled session page always states its own dates, which answer nothing)."""
    if turns:
        return texts[turns[0]].body if turns[0] in texts else ""
    if row["type"] == "Session Summary":
        return ""
    return f"{row['title']}\n{row['summary']}\n{row['body'][:5000]}"


def evidence_of(turns: list[int], texts: dict[int, Turn], words: list[str]) -> list[dict[str, Any]]:
    """Each shown turn: its observation, its kind of event, the file an edit changed, and the
    snippet that matched."""
    out = []
    for r in shown_turns(turns, texts):
        turn = texts[r]
        item: dict[str, Any] = {"observation_id": turn.id, "event": turn.event}
        body = turn.body
        edit = None if turn.markdown else edit_of(body)
        if edit is not None:
            item["file"], body = edit  # named once, and the snippet is of what changed
        out.append(item | snippet_of(body, words, width=200, markdown=turn.markdown))
    return out


def shown_turns(turns: list[int], texts: dict[int, Turn]) -> list[int]:
    """The turns a hit shows as its evidence: its best turns, best first, then the best one's
    context, the turns just before and after it in its session (the question it answers, the
    reply it got, the edit a prompt asked for). The reranker read the best turns with their
    neighbours; a hit that showed the matching turn alone would often show the question and
    not its answer, which says the same in other words. Two turns more at most, and none when
    the best turns already stand side by side."""
    if not turns or turns[0] not in texts:
        return [r for r in turns if r in texts]
    best = texts[turns[0]]
    context = [n for n in (turns[0] - 1, turns[0] + 1) if n in texts and texts[n].session_id == best.session_id
               and texts[n].event not in SESSION_MARKERS]
    return list(dict.fromkeys(r for r in [*turns, *context] if r in texts))
