"""The daemon's HTTP API as Python calls, shared by the CLI and the MCP server.

Each method returns the decoded JSON of a 2xx answer, typed as ``core.wire`` declares it (the
contract the daemon's routes are tested against), or raises the typed error whose class
answers with that status (``core.errors.error_for_status``: 400 InputError, 404 NotFound, 409
Conflict, 429 Overloaded, 503 StorageError, ...), with the daemon's own reason. A daemon that
cannot be reached raises DaemonUnavailable saying how to start it. Standard library only, like the rest of ``client/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote, urlencode

from ai_memory.client.http import DaemonClient, Reply
from ai_memory.core.errors import (
    DaemonUnavailable, GatewayUnreachable, Overloaded, ResponseIncomplete, error_for_status,
)

if TYPE_CHECKING:  # the answers' types are the wire contract's; at run time they are plain JSON (no pydantic)
    from ai_memory.core.wire import (
        Audit, AuditEntry, Briefing, Deleted, ExportBatch, FeedbackAnswer, Handoff, HandoffBegun, Handoffs, Lint,
        LoginCode, LoginState, MaybeHandoff, Message, Messages, MessageSent, Meta, Observations, OneHandoff,
        OneMessage, OneUser, PageAnswer, PageHistory, ProjectChange, Projects, Purged, QueryAnswer, RecallAnswer,
        Recent, Restored, Status,
        Stored, Sweep, Synced, Tombstones, User, UserAdded, Users,
    )

START_HINT = "start it with: ai-memory serve (or make serve in a checkout)"


def _params(**values: Any) -> str:
    kept = {k: v for k, v in values.items() if v is not None and v != ""}
    return ("?" + urlencode(kept)) if kept else ""


def _given(values: dict[str, Any]) -> dict[str, Any]:
    """The options a caller gave: None means "the daemon's default", so it is not sent."""
    return {k: v for k, v in values.items() if v is not None}


def _ref_key(ref: str) -> str:
    """How the API names a page reference: a wiki path has a folder or ends in .md, else an id."""
    return "id" if "/" not in ref and not ref.endswith(".md") else "path"


class MemoryAPI:
    """One method per endpoint a person or an agent uses."""

    def __init__(self, client: DaemonClient) -> None:
        self.client = client

    @property
    def url(self) -> str:
        return self.client.url

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            reply = self.client.request(method, path, body)
        except (GatewayUnreachable, ResponseIncomplete):
            raise  # they carry their own reason (and the breaker's retry_in_ms)
        except DaemonUnavailable as exc:
            raise type(exc)(f"the ai-memory daemon is not running at {self.client.url}",
                            detail=START_HINT) from None
        return _checked(reply)

    # -- search and pages
    def query(self, q: str, **options: Any) -> QueryAnswer:
        return cast("QueryAnswer", self._call("POST", "/v1/query", {"q": q, **_given(options)}))

    def recall(self, prompt: str, **options: Any) -> RecallAnswer:
        """What prompt recall would hand over beside ``prompt`` (nothing is recorded as handed over)."""
        return cast("RecallAnswer", self._call("POST", "/v1/recall", {"prompt": prompt, **_given(options)}))

    def read_page(self, ref: str, at: str | None = None) -> PageAnswer:
        """The page now, or (``at``: a revision from ``page_history``) as that commit left it."""
        if at:
            return cast("PageAnswer", self._call("GET", "/v1/pages/at" + _params(**{_ref_key(ref): ref, "rev": at})))
        return cast("PageAnswer", self._call("GET", "/v1/pages" + _params(**{_ref_key(ref): ref})))

    def page_history(self, ref: str) -> PageHistory:
        """{path, revisions}: the page's commits, newest first."""
        return cast("PageHistory", self._call("GET", "/v1/pages/history" + _params(**{_ref_key(ref): ref})))

    def restore_page(self, ref: str, rev: str) -> Restored:
        """Write the page back as revision ``rev`` left it, as a new commit."""
        return cast("Restored", self._call("POST", "/v1/pages/restore", {_ref_key(ref): ref, "rev": rev}))

    def write(self, **memory: Any) -> Stored:
        return cast("Stored", self._call("POST", "/v1/pages", _given(memory)))

    def delete_page(self, ref: str) -> Deleted:
        return cast("Deleted", self._call("DELETE", "/v1/pages" + _params(**{_ref_key(ref): ref})))

    def feedback(self, ref: str, signal: str) -> FeedbackAnswer:
        return cast("FeedbackAnswer", self._call("POST", "/v1/feedback", {_ref_key(ref): ref, "signal": signal}))

    def ui_login(self) -> LoginCode:
        """A one-time login code into the web view for this token's user: {path, code, expires_in_s}."""
        return cast("LoginCode", self._call("POST", "/v1/ui/login", {}))

    def ui_login_pending(self, code: str) -> bool:
        """Whether this token's login code still waits to be used."""
        return cast("LoginState", self._call("POST", "/v1/ui/login/state", {"code": code}))["pending"]

    def forget_sweep(self, dry_run: bool = False) -> Sweep:
        return cast("Sweep", self._call("POST", "/v1/forget-sweep", {"dry_run": dry_run}))

    def tombstones(self, project: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        found = self._call("GET", "/v1/tombstones" + _params(project=project, limit=limit))
        return cast("Tombstones", found)["tombstones"]

    def recent(self, project: str | None = None, limit: int = 10) -> Recent:
        return cast("Recent", self._call("GET", "/v1/recent" + _params(project=project, limit=limit)))

    def meta(self, project: str | None = None) -> Meta:
        return cast("Meta", self._call("GET", "/v1/meta" + _params(project=project)))

    def project_listing(self) -> Projects:
        """``projects`` (pages, sessions, last activity, most recent first) and ``aliases``
        (old name → the project it means now)."""
        return cast("Projects", self._call("GET", "/v1/projects"))

    def status(self) -> Status:
        return cast("Status", self._call("GET", "/status"))

    def lint(self) -> Lint:
        return cast("Lint", self._call("GET", "/v1/lint"))

    def project_change(self, verb: str, body: dict[str, Any]) -> ProjectChange | Purged:
        """A project lifecycle verb (rename, merge, purge) by the daemon: its report (admin token)."""
        return cast("ProjectChange | Purged", self._call("POST", f"/v1/projects/{verb}", body))

    def move_session(self, session_id: str, body: dict[str, Any]) -> ProjectChange:
        return cast("ProjectChange", self._call("POST", f"/v1/sessions/{quote(session_id, safe='')}/move", body))

    def sync(self, remote: str | None = None) -> Synced:
        """Git pull and push of the daemon's wiki (give the client a timeout long enough)."""
        return cast("Synced", self._call("POST", "/v1/sync", {"remote": remote} if remote else {}))

    def export(self, cursor: str | None = None, limit: int = 100) -> ExportBatch:
        """{items, next_cursor}: one batch of every page and tombstone."""
        return cast("ExportBatch", self._call("GET", "/v1/export" + _params(cursor=cursor, limit=limit)))

    def session_observations(self, session_id: str) -> Observations:
        return cast("Observations", self._call("GET", f"/v1/sessions/{quote(session_id, safe='')}/observations"))

    def briefing(self, cwd: str, agent: str | None = None, session_id: str | None = None) -> Briefing:
        """Read the briefing; with ``session_id``, a POST that also claims the session's handoff and messages."""
        if session_id:
            body = {"cwd": cwd, "session_id": session_id}
            return cast("Briefing", self._call("POST", "/v1/briefing" + _params(agent=agent), body))
        return cast("Briefing", self._call("GET", "/v1/briefing" + _params(cwd=cwd, agent=agent)))

    # -- handoffs
    def handoff_begin(self, **handoff: Any) -> Handoff:
        return cast("HandoffBegun", self._call("POST", "/v1/handoffs", _given(handoff)))["handoff"]

    def handoff_list(self, project: str | None = None, state: str | None = None) -> list[Handoff]:
        return cast("Handoffs", self._call("GET", "/v1/handoffs" + _params(project=project, state=state)))["handoffs"]

    def handoff_accept(self, cwd: str, session_id: str, agent: str | None = None) -> Handoff | None:
        body = {"cwd": cwd, "session_id": session_id, "agent": agent}
        answer = self._call("POST", "/v1/handoffs/accept", {k: v for k, v in body.items() if v})
        return cast("MaybeHandoff", answer)["handoff"]

    def handoff_cancel(self, handoff_id: str) -> Handoff:
        return cast("OneHandoff", self._call("POST", f"/v1/handoffs/{quote(handoff_id, safe='')}/cancel"))["handoff"]

    # -- messages
    def message_send(self, **message: Any) -> Message:
        return cast("MessageSent", self._call("POST", "/v1/messages", _given(message)))["message"]

    def message_list(self, project: str | None = None, state: str | None = None) -> list[Message]:
        return cast("Messages", self._call("GET", "/v1/messages" + _params(project=project, state=state)))["messages"]

    def message_pop(self, project: str, limit: int = 1, session_id: str | None = None) -> list[Message]:
        body = {"project": project, "limit": limit, "session_id": session_id}
        return cast("Messages", self._call("POST", "/v1/messages/pop", _given(body)))["messages"]

    def message_cancel(self, message_id: str) -> Message:
        return cast("OneMessage", self._call("POST", f"/v1/messages/{quote(message_id, safe='')}/cancel"))["message"]

    # -- team mode (admin token only)
    def users(self) -> list[User]:
        return cast("Users", self._call("GET", "/v1/users"))["users"]

    def user_add(self, name: str) -> UserAdded:
        """{user, token}: the token is shown this once."""
        return cast("UserAdded", self._call("POST", "/v1/users", {"name": name}))

    def user_revoke(self, name: str) -> User:
        return cast("OneUser", self._call("POST", f"/v1/users/{quote(name, safe='')}/revoke"))["user"]

    def audit(self, limit: int = 100, user: str | None = None) -> list[AuditEntry]:
        return cast("Audit", self._call("GET", "/v1/audit" + _params(limit=limit, user=user)))["entries"]


def _checked(reply: Reply) -> Any:
    if reply.ok:
        return reply.body
    body = reply.body if isinstance(reply.body, dict) else {"error": str(reply.body)[:200]}
    kind = error_for_status(reply.status)
    message = str(body.get("error") or f"the daemon answered {reply.status}")
    if kind is Overloaded:
        raise Overloaded(message)
    extra = {k: v for k, v in body.items() if k not in ("error", "detail")}
    raise kind(message, body.get("detail"), **extra)
