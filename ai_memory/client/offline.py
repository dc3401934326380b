"""``MemoryAPI`` for a daemon that is not on this machine: outbox writes and local fallback reads.

- Writes (memories, corrections, manual handoffs, messages) that cannot reach the server go to
  the outbox under a local id and come back labelled ``pending`` (``fallback: "outbox"``).
  Memory writes always carry an idempotency key (the local id), so one whose answer was lost
  can be queued and re-sent without a duplicate.
- ``query`` answers from the local index when the server is unreachable or answers 429/5xx;
  ``read_page`` answers from the outbox or the local index the same way.
- The outbox is flushed when this API is built, and after each successful call.
- Successful answers (hits, pages) are remembered for later fallbacks.

``open_api`` chooses between this and the plain ``MemoryAPI`` from the settings.
"""

from __future__ import annotations

from typing import Any

from ai_memory.client.api import MemoryAPI
from ai_memory.client.fallback import search_local
from ai_memory.client.http import DaemonClient
from ai_memory.client.local_index import LocalIndex, doc_from_hit
from ai_memory.client.outbox import Outbox, first_sentence, is_local_id
from ai_memory.client.outbox_flush import FlushReport, flush
from ai_memory.client.project import resolve_project
from ai_memory.client.resilient import ClientSettings, ResilientClient
from ai_memory.core.errors import DaemonUnavailable, NotFound, Overloaded, ResponseIncomplete, StorageError

# The server is away, busy or failing: answer locally / queue, instead of failing the caller.
UNREACHABLE = (DaemonUnavailable, Overloaded, StorageError)


def open_api(settings: ClientSettings, flush_now: bool = True) -> MemoryAPI:
    """The plain API for a local daemon (unless forced), else the resilient one."""
    if not settings.resilient:
        return MemoryAPI(DaemonClient(settings.url, settings.token, settings.local_timeout_s))
    return ResilientAPI(settings, flush_now=flush_now)


class ResilientAPI(MemoryAPI):
    """Every ``MemoryAPI`` call through the breaker; writes queue and searches fall back when offline."""

    def __init__(self, settings: ClientSettings, flush_now: bool = True) -> None:
        super().__init__(ResilientClient(settings))  # type: ignore[arg-type]  # same interface
        self.settings = settings
        self.outbox = Outbox(settings.state_dir)
        self.index = LocalIndex(settings.state_dir, settings.data_dir / "wiki")
        self._flushing = False
        if flush_now:
            self.flush_outbox()

    # -- the outbox
    def flush_outbox(self) -> FlushReport:
        """Send what the outbox holds (a no-op with nothing pending or the breaker open)."""
        if self._flushing or not self.outbox.pending_count():
            return FlushReport()
        if self.client.breaker.open_for_ms():  # type: ignore[attr-defined]
            return FlushReport(stopped="the circuit breaker is open")
        self._flushing = True
        try:
            return flush(self.outbox, self.client)
        finally:
            self._flushing = False

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        answer = super()._call(method, path, body)
        self.flush_outbox()  # the server is back: whatever waited goes now, in order
        return answer

    # -- reads
    def query(self, q: str, **options: Any) -> dict[str, Any]:
        try:
            reply = super().query(q, **options)
        except UNREACHABLE as exc:
            return search_local(self.index, self.outbox, q, project=options.get("project"),
                                all_projects=bool(options.get("all")), k=int(options.get("k") or 10),
                                reason=_reason(exc))
        self.index.remember([d for d in map(doc_from_hit, reply.get("hits") or []) if d is not None])
        return reply

    def read_page(self, ref: str, at: str | None = None) -> dict[str, Any]:
        if at:  # a past version is in the server's git history only
            return super().read_page(ref, at)
        entry = self.outbox.get(ref) if is_local_id(ref) else None
        if entry is not None and entry.server_id:
            ref = entry.server_id  # adopted: the server's record is the real one now
        elif entry is not None:
            return _pending_page(entry)
        try:
            page = super().read_page(ref)
        except UNREACHABLE as exc:
            return self._local_page(ref, exc)
        doc = doc_from_hit(page)
        if doc is not None:
            self.index.remember([doc])
        return page

    def _local_page(self, ref: str, exc: Exception) -> dict[str, Any]:
        self.index.refresh_wiki()
        doc = self.index.page(ref)
        if doc is None:
            raise exc
        fm: dict[str, Any] = {"id": doc.uid} if doc.uid else {}
        if doc.type and doc.type not in ("Note",):
            fm["kind"] = doc.type.lower()
        return {"path": doc.path, "title": doc.title, "type": doc.type, "project": doc.project, "uid": doc.uid,
                "body": doc.body, "frontmatter": fm, "lineage": [], "problems": [], "fallback": "local",
                "source": doc.source, "note": "read locally (" + _reason(exc) + "); lineage unknown"}

    # -- writes
    def write(self, **memory: Any) -> dict[str, Any]:
        local_id = self.outbox.new_local_id()
        body = {k: v for k, v in memory.items() if v is not None}
        body.setdefault("idempotency_key", local_id)  # a lost answer can then be re-sent safely
        target = self.outbox.get(body["supersedes"]) if is_local_id(body.get("supersedes")) else None
        if target is not None and target.state == "failed":
            raise NotFound("nothing to supersede", detail=f"{target.local_id} failed: {target.reason}")
        if target is not None and target.server_id:
            body["supersedes"] = target.server_id
        if target is None or target.server_id:
            try:
                return super().write(**body)
            except UNREACHABLE as exc:
                reason = _reason(exc)
        else:
            reason = f"it corrects {target.local_id}, which is still in the outbox"
        entry = self.outbox.add("memory", body, local_id=local_id, project=body.get("project"),
                                title=body.get("title") or first_sentence(str(body.get("text", ""))),
                                text=str(body.get("text", "")), attempted=False)
        return {"id": entry.local_id, "path": "", "created": True, "supersedes": body.get("supersedes"),
                "pending": True, "fallback": "outbox", "note": _queued(reason)}

    def handoff_begin(self, **handoff: Any) -> dict[str, Any]:
        local_id = self.outbox.new_local_id()
        body = {k: v for k, v in handoff.items() if v is not None}
        body.setdefault("idempotency_key", local_id)  # the first attempt too: its answer may be lost
        try:
            return super().handoff_begin(**body)
        except UNREACHABLE as exc:
            project = body.get("project") or (resolve_project(body["cwd"]).name if body.get("cwd") else None)
            entry = self.outbox.add("handoff", body, local_id=local_id, project=project,
                                    title=first_sentence(str(body.get("summary", ""))),
                                    text=_handoff_text(body), attempted=isinstance(exc, ResponseIncomplete))
            return {**body, "id": entry.local_id, "project": project, "state": "pending", "kind": "manual",
                    "pending": True, "fallback": "outbox", "note": _queued(_reason(exc))}

    def message_send(self, **message: Any) -> dict[str, Any]:
        local_id = self.outbox.new_local_id()
        body = {k: v for k, v in message.items() if v is not None}
        body.setdefault("idempotency_key", local_id)  # the first attempt too: its answer may be lost
        try:
            return super().message_send(**body)
        except UNREACHABLE as exc:
            entry = self.outbox.add("message", body, local_id=local_id,
                                    project=body.get("to_project"), title=first_sentence(str(body.get("body", ""))),
                                    text=str(body.get("body", "")), attempted=isinstance(exc, ResponseIncomplete))
            return {**body, "id": entry.local_id, "state": "pending", "pending": True, "fallback": "outbox",
                    "note": _queued(_reason(exc))}


def _reason(exc: Exception) -> str:
    message = getattr(exc, "message", str(exc))
    retry = getattr(exc, "retry_in_ms", None)
    return message + (f" (retry in {retry / 1000:.0f} s)" if retry else "")


def _queued(reason: str) -> str:
    return f"queued in the local outbox, sent when the server is back ({reason}); see ai-memory outbox"


def _handoff_text(body: dict[str, Any]) -> str:
    parts = [str(body.get("summary", ""))]
    for key in ("next_steps", "open_questions", "files_touched"):
        parts += [str(item) for item in body.get(key) or []]
    return "\n".join(parts)


def _pending_page(entry: Any) -> dict[str, Any]:
    """A queued memory, shaped like a page (so ``correct`` can supersede it before it is sent)."""
    body = entry.body
    fm = {k: body[k] for k in ("kind", "scope", "tags", "entities", "source") if body.get(k) is not None}
    return {"path": entry.server_path or "", "title": entry.title, "type": str(body.get("kind", entry.kind)).title(),
            "project": entry.project or "", "uid": entry.local_id, "body": entry.text, "frontmatter": fm,
            "lineage": [], "problems": [], "pending": True, "fallback": "outbox", "outbox_state": entry.state,
            "note": f"queued in the local outbox ({entry.state}); not on the server yet"}
