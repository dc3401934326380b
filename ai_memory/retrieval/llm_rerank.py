"""The optional LLM rerank (``llm.rerank``): one call per query reorders the local top 30.

The model sees only each hit's title and snippet, numbered in the local order, and answers
``{"order": [...]}`` (validated against its schema). Hits it leaves out keep their local
order after the ones it placed. On any failure or past ``llm.rerank_timeout_s`` the local
order stands; with ``explain`` each hit says which ordering was used and its local rank.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ai_memory.core.errors import LlmError
from ai_memory.core.wire import Hit
from ai_memory.llm.answers import parse_answer, rerank_schema
from ai_memory.llm.prompts import RERANK_SYSTEM, rerank_prompt
from ai_memory.llm.providers import Provider
from ai_memory.retrieval.search import Answer, Query

log = logging.getLogger(__name__)
RERANK_TOP = 30


class LlmReranker:
    """Wraps the local search: a wider local answer, reordered by the model, cut to ``k``."""

    def __init__(self, provider: Provider, timeout_s: float) -> None:
        self._provider = provider
        self._timeout_s = timeout_s
        self.used = 0
        self.fallbacks = 0
        self.last_error: str | None = None

    async def answer(self, query: Query, local: Callable[[Query], Awaitable[Answer]]) -> Answer:
        if query.as_of:  # a search of the past is history's order, not a relevance ranking
            return await local(query)
        found = await local(dataclasses.replace(query, k=max(query.k, RERANK_TOP)))
        ordered, used, why = await self._reorder(query.q, found.hits)
        if query.explain:
            rank = {id(hit): n for n, hit in enumerate(found.hits, 1)}
            for hit in ordered:
                hit.setdefault("explain", {})["ordering"] = {
                    "used": used, "local_rank": rank[id(hit)], **({"reason": why} if why else {})}
        found.hits = ordered[: query.k]
        return found

    async def _reorder(self, q: str, hits: list[Hit]) -> tuple[list[Hit], str, str | None]:
        top = hits[:RERANK_TOP]
        if len(top) < 2:
            return hits, "local", "fewer than two hits"
        prompt = rerank_prompt(q, [(str(h.get("title") or h["path"]), str(h.get("snippet") or "")) for h in top])
        try:
            async with asyncio.timeout(self._timeout_s):
                reply = await self._provider.complete(RERANK_SYSTEM, prompt, timeout_s=self._timeout_s)
            order = parse_answer(reply, rerank_schema(len(top)))["order"]
        except Exception as exc:  # any failure: the search still answers, in the local order
            self.fallbacks += 1
            self.last_error = exc.message if isinstance(exc, LlmError) else \
                "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
            log.info("LLM rerank fell back to the local order: %s", self.last_error,
                     exc_info=not isinstance(exc, (LlmError, TimeoutError)))
            return hits, "local", self.last_error
        self.used += 1
        placed = [top[n - 1] for n in order]
        chosen = set(order)
        rest = [hit for n, hit in enumerate(top, 1) if n not in chosen]
        return placed + rest + hits[RERANK_TOP:], "llm", None

    def describe(self) -> dict[str, Any]:
        return {"used": self.used, "fallbacks": self.fallbacks, "last_error": self.last_error}
