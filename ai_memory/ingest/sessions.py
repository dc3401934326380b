"""Session end: a session's observations become a session page and a handoff, by rules.

Triggered by a session-end event, by a Stop followed by ``sessions.idle_minutes`` of quiet
(agents without SessionEnd, such as Codex), or on demand (``ai-memory finalize-session``).
The page file is written atomically; its index rows, the handoff and the session's
``page_path`` change in one writer transaction. A compile that gives the bytes the page already
holds, or the bytes a model's summary was written over (the consolidation job's), writes no
page and commits nothing: finalizing an unchanged session again costs a read, not a model call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from ai_memory.core.clock import utc_iso
from ai_memory.core.errors import AiMemoryError, NotFound
from ai_memory.core.session_compile import compile_session
from ai_memory.store.handoffs import upsert_auto_handoff
from ai_memory.store.llm_jobs import sha256_text, standing_rewrite
from ai_memory.store.observations import (
    mark_compiled, session_exists, session_observations, session_page_path, sessions_to_compile,
)
from ai_memory.store.pages import page_session
from ai_memory.store.reader import Reader
from ai_memory.store.writer import WriteTx
from ai_memory.wiki.files import lstat_file
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)
# (tx, session_id, page_path, page_text): runs in the page's transaction (the LLM queue's enqueue)
OnCompiled = Callable[[WriteTx, str, str, str], None]
GIVE_UP_AFTER = 5  # failed compiles of one session before the idle pass leaves it
IDLE_BATCH = 100


class SessionCompiler:
    """Compiles sessions into pages; one compile per session at a time."""

    def __init__(self, wiki: Wiki, reader: Reader, idle_minutes: float, on_compiled: OnCompiled | None = None) -> None:
        self._wiki = wiki
        self._reader = reader
        self._idle = timedelta(minutes=idle_minutes)
        self._on_compiled = on_compiled
        self.compiled = 0
        self._passes = 0  # idle passes run so far
        self._failing: dict[str, tuple[int, float]] = {}  # session → (failures, the pass to try again at)

    async def finalize_known(self, session_id: str) -> str | None:
        """``finalize`` for a caller naming the session: NotFound when no event ever had it."""
        if not await self._reader.run(lambda c: session_exists(c, session_id)):
            raise NotFound("no such session", detail=session_id)
        return await self.finalize(session_id)

    async def _page_path(self, session_id: str, wanted: str) -> str:
        """Where the session's page goes: where it already is, else ``wanted`` unless another
        session's page (or any file) is there. Ids are cut to 8 characters for the file name,
        and time-ordered ids (Codex's UUIDv7) share those for a minute: the second session of
        that minute must not replace the first one's page."""
        def look(conn: sqlite3.Connection) -> tuple[str | None, str | None]:
            return session_page_path(conn, session_id), page_session(conn, wanted)

        known, holder = await self._reader.run(look)
        if known:
            return known
        if holder == session_id or (holder is None and not await asyncio.to_thread(self._taken, wanted)):
            return wanted
        return f"{wanted.removesuffix('.md')}-{hashlib.sha256(session_id.encode()).hexdigest()[:6]}.md"

    def _taken(self, rel: str) -> bool:
        """Whether anything is at ``rel`` (a file, a link, a folder): one lstat, nothing read."""
        try:
            lstat_file(self._wiki.dir, rel)
        except FileNotFoundError:
            return False
        except OSError:  # a link on the way there: not a place to write either
            return True
        return True

    async def finalize(self, session_id: str) -> str | None:
        """Compile one session now; return its page path (None: nothing worth a page)."""
        observations = await self._reader.run(lambda c: session_observations(c, session_id))
        if not observations:
            return None
        for observation in observations:  # stored before a rename, or under a moved session's old project
            observation["project"] = self._wiki.project_now(observation["project"], session_id)
        page = compile_session(observations)
        last_event = observations[-1]["occurred_at"]
        if page is not None:
            page = dataclasses.replace(page, path=await self._page_path(session_id, page.path))
        if page is None:  # nothing worth a page; remember that we looked
            await self._wiki.writer.submit_wait(lambda tx: mark_compiled(tx.conn, session_id, last_event))
            return None

        def rows(tx: WriteTx, _page_id: int = 0) -> None:
            upsert_auto_handoff(tx.conn, page.handoff, page.path)
            mark_compiled(tx.conn, session_id, last_event, page.path)
            if self._on_compiled is not None:  # queues nothing for bytes its job already holds
                self._on_compiled(tx, session_id, page.path, page.text)

        if await self._standing(session_id, page.path, page.text):
            await self._wiki.writer.submit_wait(rows)
            return page.path
        await self._wiki.write_page(page.path, page.text, f"session: {page.path}", extra=rows)
        self.compiled += 1
        log.info("session %s compiled to %s", session_id, page.path)
        return page.path

    async def _standing(self, session_id: str, rel: str, text: str) -> bool:
        """Whether the page file already stands for this compile: it holds ``text``, or what the
        model's summary made of these same bytes."""
        try:
            found = sha256_text((await asyncio.to_thread(self._wiki.read, rel)).decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            return False
        if found == sha256_text(text):
            return True
        return found == await self._reader.run(lambda c: standing_rewrite(c, session_id, text))

    async def finalize_idle(self) -> list[str]:
        """Compile sessions that stopped and stayed quiet, or changed since their last compile.
        A session that cannot be compiled is tried again after 1, 2, 4 and 8 passes, then left
        until the daemon restarts or someone asks (``finalize-session``): one line each time,
        never a loop of tracebacks."""
        cutoff = utc_iso(datetime.now(timezone.utc) - self._idle)
        ids = await self._reader.run(lambda c: sessions_to_compile(c, cutoff, limit=IDLE_BATCH))
        self._passes += 1
        paths = []
        for session_id in ids:
            if self._failing.get(session_id, (0, 0))[1] > self._passes:
                continue
            try:
                path = await self.finalize(session_id)
            except Exception as exc:  # one bad session must not stop the others
                self._failed(session_id, exc)
                continue
            self._failing.pop(session_id, None)
            if path:
                paths.append(path)
        return paths

    def _failed(self, session_id: str, exc: Exception) -> None:
        failures = self._failing.get(session_id, (0, 0))[0] + 1
        again = self._passes + 2 ** (failures - 1) if failures < GIVE_UP_AFTER else float("inf")
        self._failing[session_id] = (failures, again)
        why = exc.message if isinstance(exc, AiMemoryError) else f"{type(exc).__name__}: {exc}"
        if failures >= GIVE_UP_AFTER:
            log.error("session %s could not be compiled %d times (%s); left until a restart or"
                      " `ai-memory finalize-session --session %s`", session_id, failures, why, session_id)
        else:
            log.warning("could not compile session %s (%s); trying again later", session_id, why)
        if not isinstance(exc, (AiMemoryError, OSError)) and failures == 1:
            log.debug("compiling session %s failed", session_id, exc_info=exc)
