"""Session end: a session's observations become a session page and a handoff, by rules.

Triggered by a session-end event, by a Stop followed by ``sessions.idle_minutes`` of quiet
(agents without SessionEnd, such as Codex), or on demand (``ai-memory finalize-session``).
The page file is written atomically; its index rows, the handoff and the session's
``page_path`` change in one writer transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from ai_memory.core.session_compile import compile_session
from ai_memory.store.handoffs import upsert_auto_handoff
from ai_memory.store.observations import session_observations
from ai_memory.store.reader import Reader
from ai_memory.store.writer import WriteTx
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)
# (tx, session_id, page_path, page_text): runs in the page's transaction (the LLM queue's enqueue)
OnCompiled = Callable[[WriteTx, str, str, str], None]


class SessionCompiler:
    """Compiles sessions into pages; one compile per session at a time."""

    def __init__(self, wiki: Wiki, reader: Reader, idle_minutes: float, on_compiled: OnCompiled | None = None) -> None:
        self._wiki = wiki
        self._reader = reader
        self._idle = timedelta(minutes=idle_minutes)
        self._on_compiled = on_compiled
        self.compiled = 0

    async def finalize(self, session_id: str) -> str | None:
        """Compile one session now; return its page path (None: nothing worth a page)."""
        observations = await self._reader.run(lambda c: session_observations(c, session_id))
        if not observations:
            return None
        page = compile_session(observations)
        last_event = observations[-1]["occurred_at"]
        if page is None:  # nothing worth a page; remember that we looked
            await self._wiki.writer.submit_wait(lambda tx: tx.conn.execute(
                "UPDATE sessions SET compiled_at = ? WHERE id = ?", (last_event, session_id)))
            return None

        def rows(tx: WriteTx, page_id: int) -> None:
            upsert_auto_handoff(tx.conn, page.handoff, page.path)
            tx.conn.execute(
                "UPDATE sessions SET page_path = ?, compiled_at = ? WHERE id = ?",
                (page.path, last_event, session_id),
            )
            if self._on_compiled is not None:
                self._on_compiled(tx, session_id, page.path, page.text)

        await self._wiki.write_page(page.path, page.text, f"session: {page.path}", extra=rows)
        self.compiled += 1
        log.info("session %s compiled to %s", session_id, page.path)
        return page.path

    async def finalize_idle(self) -> list[str]:
        """Compile sessions that stopped and stayed quiet, or changed since their last compile."""
        cutoff = (datetime.now(timezone.utc) - self._idle).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        ids = await self._reader.run(lambda c: [r[0] for r in c.execute(
            "SELECT s.id FROM sessions s WHERE s.last_event_at < ?"
            " AND (s.compiled_at IS NULL OR s.compiled_at < s.last_event_at)"
            " AND EXISTS (SELECT 1 FROM observations o WHERE o.session_id = s.id"
            "             AND o.event IN ('stop', 'session-end'))"
            " ORDER BY s.last_event_at LIMIT 100", (cutoff,))])
        paths = []
        for session_id in ids:
            try:
                path = await self.finalize(session_id)
            except Exception:  # one bad session must not stop the others
                log.exception("could not compile session %s", session_id)
                continue
            if path:
                paths.append(path)
        return paths
