"""The LLM consolidation worker: one task that runs the ``llm_jobs`` queue, off the hook path.

A session end queues its job in its own transaction (``enqueue_rows``, handed to the session
compiler). The worker leases one due job at a time (a conditional update, so a lease a crash
left behind is taken back once it runs out), asks the model, keeps the validated answer on the
job, then writes from it (``proposals``). A failed attempt waits ``backoff_s`` doubled per
attempt; after ``max_attempts`` the job is marked failed with its last error. The provider's
endpoint and key are checked once at start (one cheap call): a failure is a status line.

Every model call is counted before it is made, in the store (so a restart or a rebuild keeps the
counts): per session (``llm.max_calls_per_session``: past it the job ends ``capped``, with the
reason) and per UTC day (``llm.max_calls_per_day``: past it the job waits for the next day).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from ai_memory.core.clock import parse_utc, utc_day, utc_iso
from ai_memory.core.errors import AiMemoryError, LlmError
from ai_memory.llm.answers import CONSOLIDATION_SCHEMA, parse_answer
from ai_memory.llm.prompts import CONSOLIDATE_SYSTEM, consolidation_prompt
from ai_memory.llm.providers import Provider
from ai_memory.llm.settings import LlmSettings
from ai_memory.store.llm_jobs import (
    LeasedJob, calls_on, cap_reached, defer, enqueue, finish, lease_next, next_due, queue_counts, reserve_call,
    retry_or_fail, save_proposal,
)
from ai_memory.store.reader import Reader
from ai_memory.store.writer import WriteTx
from ai_memory.coordination.memories import Memories
from ai_memory.coordination.proposals import Proposal, rewrite_session_page, session_project, store_memories
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)
IDLE_WAIT_S = 60.0  # longest sleep with nothing due: a job queued by another process is seen
STORE_RETRY_S = 5.0  # wait after the store refused the worker's own write


class Consolidator:
    """Owns the queue's worker; ``describe`` is what ``status`` shows."""

    def __init__(self, settings: LlmSettings, provider: Provider, wiki: Wiki, reader: Reader, memories: Memories,
                 clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> None:
        self.settings = settings
        self.provider = provider
        self._wiki = wiki
        self._reader = reader
        self._memories = memories
        self._clock = clock
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.check = "not checked yet"
        self.completed = 0

    def enqueue_rows(self, tx: WriteTx, session_id: str, page_path: str, page_text: str) -> None:
        """Queue the session's job inside the session end's transaction (on the writer thread)."""
        queued = enqueue(tx.conn, session_id, page_path, page_text, utc_iso(self._clock()))
        if queued and self._loop is not None:  # leased after this commit: the writer runs jobs in order
            self._loop.call_soon_threadsafe(self._wake.set)

    async def check_provider(self) -> None:
        try:
            await self.provider.check()
        except AiMemoryError as exc:
            self.check = f"failed: {exc.message}" + (f" ({exc.detail})" if exc.detail else "")
            log.warning("LLM provider %s at %s: %s", self.settings.provider, self.settings.base_url, self.check)
            return
        self.check = "ok"
        log.info("LLM provider %s at %s answers (model %s)", self.settings.provider, self.settings.base_url,
                 self.settings.model)

    async def run(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.check_provider()
        while True:
            try:
                if not await self.run_once():
                    await self._sleep_until_due()
            except AiMemoryError as exc:  # the store refused (a full queue, a reindex): later
                log.warning("LLM consolidation waits: %s", exc.message)
                await asyncio.sleep(STORE_RETRY_S)

    async def run_once(self) -> bool:
        """Lease and attempt one due job; False when none is due."""
        now = self._clock()
        until = utc_iso(now + timedelta(seconds=self.settings.lease_s))
        job = await self._wiki.writer.submit_wait(
            lambda tx: lease_next(tx.conn, utc_iso(now), until, self.settings.max_attempts))
        if job is None:
            return False
        try:
            outcome = await self._attempt(job)
        except CapReached as exc:
            await self._capped(job, exc)
        except Exception as exc:  # every failure is the job's: logged, retried later, never the worker's end
            await self._failed(job, exc)
        else:
            self.completed += 1
            log.info("consolidated session %s: %s", job.session_id, outcome)
        return True

    async def _attempt(self, job: LeasedJob) -> dict[str, Any]:
        try:
            text = (await asyncio.to_thread(self._wiki.read, job.page_path)).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            outcome: dict[str, Any] = {"page": "missing"}
            await self._wiki.writer.submit_wait(lambda tx: finish(tx.conn, job, outcome, utc_iso(self._clock())))
            return outcome
        proposal = Proposal.from_json(job.proposal) if job.proposal else await self._propose(job, text)
        outcome = {"model": proposal.model, **await store_memories(
            self._memories, job, session_project(text), proposal)}
        if not await rewrite_session_page(self._wiki, job, proposal, outcome, utc_iso(self._clock())):
            await self._wiki.writer.submit_wait(lambda tx: finish(tx.conn, job, outcome, utc_iso(self._clock())))
        return outcome

    async def _propose(self, job: LeasedJob, page_text: str) -> Proposal:
        await self._reserve_call(job)
        reply = await self.provider.complete(CONSOLIDATE_SYSTEM, consolidation_prompt(page_text))
        answer = parse_answer(reply, CONSOLIDATION_SCHEMA)
        proposal = Proposal(answer, self.settings.model, utc_iso(self._clock()))
        kept = await self._wiki.writer.submit_wait(lambda tx: save_proposal(tx.conn, job, proposal.to_json()))
        if not kept:
            raise LeaseLost(f"session {job.session_id} was queued again meanwhile")
        return proposal

    async def _reserve_call(self, job: LeasedJob) -> None:
        """Count the call about to be made, or raise CapReached (LeaseLost: queued again meanwhile)."""
        s, day = self.settings, utc_day(self._clock())
        refused = await self._wiki.writer.submit_wait(
            lambda tx: reserve_call(tx.conn, job, day, s.max_calls_per_session, s.max_calls_per_day))
        if refused == "lease":
            raise LeaseLost(f"session {job.session_id} was queued again meanwhile")
        if refused == "session":
            raise CapReached("session", f"llm.max_calls_per_session reached: {s.max_calls_per_session} model calls"
                             f" made for this session already; not consolidated")
        if refused == "day":
            raise CapReached("day", f"llm.max_calls_per_day reached: {s.max_calls_per_day} model calls made on {day}"
                             " (UTC); waits for the next day")

    async def _capped(self, job: LeasedJob, exc: "CapReached") -> None:
        """A cap refused the call: the session's ends the job (capped), the day's defers it to
        the next UTC day. Neither is an attempt retried with backoff."""
        now = self._clock()
        if exc.cap == "session":
            await self._wiki.writer.submit_wait(lambda tx: cap_reached(tx.conn, job, exc.message, utc_iso(now)))
        else:
            tomorrow = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), tzinfo=timezone.utc)
            await self._wiki.writer.submit_wait(lambda tx: defer(tx.conn, job, utc_iso(tomorrow), exc.message, utc_iso(now)))
        log.warning("consolidation of session %s: %s", job.session_id, exc.message)

    async def _failed(self, job: LeasedJob, exc: Exception) -> None:
        reason = f"{exc.message} ({exc.detail})" if isinstance(exc, AiMemoryError) and exc.detail else \
            (exc.message if isinstance(exc, AiMemoryError) else f"{type(exc).__name__}: {exc}")
        now = self._clock()
        retry_at = None
        if job.tries < self.settings.max_attempts and not isinstance(exc, LeaseLost):
            retry_at = utc_iso(now + timedelta(seconds=self.settings.backoff_s * 2 ** (job.tries - 1)))
        state = await self._wiki.writer.submit_wait(lambda tx: retry_or_fail(tx.conn, job, reason, retry_at, utc_iso(now)))
        log.warning("consolidation of session %s, attempt %d/%d: %s (%s)", job.session_id, job.tries,
                    self.settings.max_attempts, reason, "retried at " + retry_at if retry_at else state,
                    exc_info=not isinstance(exc, AiMemoryError))  # a bug of ours shows its traceback

    async def _sleep_until_due(self) -> None:
        self._wake.clear()  # before reading: a job queued from now on wakes this wait
        due = await self._reader.run(next_due)
        wait = IDLE_WAIT_S
        if due is not None:
            moment = parse_utc(due)
            wait = min(IDLE_WAIT_S, max(0.05, (moment - self._clock()).total_seconds()))
        try:
            await asyncio.wait_for(self._wake.wait(), timeout=wait)
        except TimeoutError:
            pass

    async def describe(self) -> dict[str, Any]:
        s, day = self.settings, utc_day(self._clock())
        queue, calls = await self._reader.run(lambda c: (queue_counts(c), calls_on(c, day)))
        return {"enabled": True, "provider": s.provider, "model": s.model, "base_url": s.base_url,
                "check": self.check, "rerank": s.rerank, "completed": self.completed, "queue": queue,
                "calls_today": calls, "max_calls_per_day": s.max_calls_per_day,
                "max_calls_per_session": s.max_calls_per_session}


class CapReached(LlmError):
    """A cap on model calls refused this one (``cap``: "session" or "day"); nothing was asked."""

    def __init__(self, cap: str, message: str) -> None:
        super().__init__(message)
        self.cap = cap


class LeaseLost(LlmError):
    """The job was queued again (its session recompiled) while this attempt ran: it starts over."""
