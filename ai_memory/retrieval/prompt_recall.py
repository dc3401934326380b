"""Prompt recall: what memory holds for the prompt an agent just received, handed over beside it.

The prompt hook asks (``POST /v1/recall``, the hook payload itself); this searches the session's
project with the prompt, keeps what ``core.recall.choose`` keeps (confident, close to the best,
nothing this session was handed already, within the budgets), records what it hands over (the
next prompt of the session, and the web view, know it), and renders the fenced block. A
caller that only looks (``ai-memory recall``: no session) records nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ai_memory.core.clock import now_iso
from ai_memory.core.recall import Choice, RecallSettings, choose, render, worth_recalling
from ai_memory.core.wire import RecallAnswer
from ai_memory.retrieval.search import Answer, Query
from ai_memory.store.reader import Reader
from ai_memory.store.recall_given import Given, SessionGiven, given_in, record_given
from ai_memory.store.writer import Writer

Search = Callable[[Query], Awaitable[Answer]]
HITS = 6  # hits read: the items come from the first few, the rest say why they were not
# Candidates the reranker reads: a prompt needs the best few, on every prompt within a hook's
# budget; half a search's depth handed over the same items on the development set, sooner.
RERANKED = 15


@dataclass(frozen=True)
class RecallAsk:
    prompt: str
    project: str
    owner: str
    session_id: str | None = None  # None: a look that hands nothing over (ai-memory recall)
    explain: bool = False
    deadline: float | None = None  # time.monotonic() past which the caller no longer waits


@dataclass
class Recall:
    project: str
    text: str = ""
    choice: Choice = field(default_factory=Choice)
    settings: RecallSettings = field(default_factory=RecallSettings)
    silent: str | None = None  # why nothing was looked for
    stages_ms: dict[str, float] = field(default_factory=dict)  # how long each stage of the search took

    def as_json(self, explain: bool = False) -> RecallAnswer:
        out: RecallAnswer = {"project": self.project, "items": [i.as_json() for i in self.choice.items],
                             "text": self.text}
        if explain:
            out["explain"] = {"min_confidence": self.settings.min_confidence, "min_ratio": self.settings.min_ratio,
                              "skipped": self.choice.skipped, "silent": self.silent, "stages_ms": self.stages_ms}
        return out


async def recall(search: Search, reader: Reader, writer: Writer, settings: RecallSettings, ask: RecallAsk) -> Recall:
    """What to hand over beside ``ask.prompt`` (and, for a session, recorded as handed over)."""
    found = Recall(ask.project, settings=settings)
    if not worth_recalling(ask.prompt):
        found.silent = "the prompt asks nothing to recall for (a few words, or a slash command)"
        return found
    session = ask.session_id
    given = await reader.run(lambda c: given_in(c, session, ask.owner)) if session else SessionGiven(frozenset(), 0)
    if session and given.prompt_chars >= settings.session_max_chars:
        found.silent = "recall.session_max_chars reached in this session"
        return found
    query = Query(q=ask.prompt[:2000], project=ask.project, k=HITS, depth=RERANKED, owner=ask.owner,
                  explain=ask.explain, evidence_from=settings.min_confidence)
    try:
        async with asyncio.timeout(_left(ask.deadline)):
            answer = await search(query)
    except TimeoutError:
        found.silent = "the search took longer than the caller waits (budget_ms)"
        return found
    found.stages_ms = answer.stages_ms
    found.choice = choose(answer.hits, project=ask.project, session_id=session, given=given.paths,
                          chars_given=given.prompt_chars, settings=settings)
    if not found.choice.items:
        return found
    text = render(ask.project, found.choice.items)
    if session:
        share = len(text) // len(found.choice.items)
        recorded = await writer.submit_wait(record_given(session, ask.owner, [
            Given(i.path, "prompt", share, i.line, i.confidence) for i in found.choice.items], now_iso(),
            until=ask.deadline))
        if not recorded:  # the caller gave up: what it never read is not handed over
            found.silent = "the answer was ready after the caller stopped waiting (budget_ms)"
            found.choice.items = []
            return found
    found.text = text
    return found


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())
