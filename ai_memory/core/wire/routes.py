"""The routes: method, path, what each takes and answers, who may call it (``core.openapi``
makes the document from this table, and the contract test holds the daemon to it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ai_memory.core.wire.answers import (
    Audit, Briefing, Deleted, EnvelopeStored, ExportBatch, FeedbackAnswer, Finalized, HandoffBegun, Handoffs,
    Health, HookAccepted, HookBatch, Lint, LoginCode, LoginState, MaybeHandoff, MessageSent, Messages, Meta,
    Observations, OneHandoff, OneMessage, OneUser, PageAnswer, PageHistory, Pinned, ProjectChange, Projects,
    Purged, QueryAnswer, RecallAnswer, Recent, Reindexed, Restored, Status, Stored, Sweep, Synced, Tombstones,
    UserAdded, Users,
)
from ai_memory.core.wire.bodies import (
    AcceptBody, FeedbackBody, HandoffBody, LoginCodeBody, MemoryBody, MessageBody, PinBody, PopBody,
    ProjectMoveBody, PurgeBody, QueryBody, RecallBody, RestoreBody, SessionMoveBody, SweepBody, SyncBody, UserBody,
)

__all__ = ["AGENT", "MAX_EXPORT_BATCH", "PROJECT", "Param", "REF_PARAMS", "ROUTES", "Route", "SESSION_PATH", "limit",
           "route_param"]


@dataclass(frozen=True)
class Param:
    name: str
    description: str
    type: str = "string"  # an OpenAPI scalar type
    where: Literal["query", "path"] = "query"
    default: int | None = None  # an integer's, when it is left out
    maximum: int | None = None  # an integer's largest (its smallest is 1)


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # as OpenAPI writes it: /v1/handoffs/{handoff_id}/cancel
    summary: str
    tag: str
    body: type | None = None
    answer: type | None = None
    status: int = 200
    params: tuple[Param, ...] = ()
    public: bool = False  # answers without a token
    admin: bool = False  # the data dir's own token only
    raw_body: str | None = None  # a body the schema leaves open: an agent's payload, in its own words
    also: tuple[int, ...] = ()  # other 2xx statuses it answers with (200 for a duplicate)


REF_PARAMS = (Param("path", "the page's wiki path (one of path or id)"), Param("id", "the memory id"))
PROJECT = Param("project", "a project name; default: every project the caller may see")
def limit(default: int, maximum: int) -> Param:
    """``?limit=``: how many at most, from 1 to ``maximum``."""
    return Param("limit", "how many at most", "integer", default=default, maximum=maximum)


MAX_EXPORT_BATCH = 1000  # pages (with their text) in one batch of the export
AGENT = Param("agent", "the agent speaking: claude, codex, gemini, copilot, opencode, cursor, cline, ...")
# What a hook call may name in its query when the payload does not (``server.hook_request``).
HOOK_FALLBACKS = (Param("cwd", "the agent's working directory, when the payload has none"),
                  Param("session_id", "the session, when the payload has none"),
                  Param("project", "the project, instead of the one the directory names"))
SESSION_PATH = Param("session_id", "the agent's session id", where="path")

ROUTES: tuple[Route, ...] = (
    Route("GET", "/health", "Whether the daemon is up", "status", answer=Health, public=True),
    Route("GET", "/status", "What the daemon holds and how each part is doing", "status", answer=Status),
    Route("GET", "/v1/openapi.json", "This document", "status", answer=dict, public=True),
    Route("POST", "/hook", "Record one hook event (202 once it is durable)", "capture", answer=HookAccepted,
          status=202, raw_body="the agent's hook payload, as it sent it",
          params=(AGENT, Param("event", "the hook event, when the payload does not name it"),
                  Param("host", "the machine the event comes from"),
                  Param("quiet", "1: answer {} (what an agent's HTTP hook reads as no opinion)")),
          also=(200,)),
    Route("POST", "/hook/batch", "Record several hook events (the spool drain)", "capture", answer=HookBatch,
          raw_body="a list of payloads, or {events: [...]}", params=(AGENT,)),
    Route("POST", "/hook/envelope", "Record an event in its spool envelope", "capture", answer=EnvelopeStored,
          status=202, raw_body="{payload, agent, event?, idempotency_key?, host?, os?, captured_at?}", also=(200,)),
    Route("GET", "/v1/briefing", "The SessionStart briefing (reads only)", "coordination", answer=Briefing,
          params=(Param("cwd", "the agent's working directory"), AGENT, PROJECT,
                  Param("format", "hook: answer what the agent's SessionStart hook prints"))),
    Route("POST", "/v1/briefing", "The SessionStart briefing, claiming the session's handoff and messages",
          "coordination", answer=Briefing, raw_body="the agent's SessionStart payload ({session_id, cwd, ...})",
          params=(AGENT, Param("format", "hook: answer what the agent's SessionStart hook prints"), *HOOK_FALLBACKS)),
    Route("POST", "/v1/query", "Search memory", "search", body=QueryBody, answer=QueryAnswer),
    Route("POST", "/v1/recall", "What memory holds for a prompt, beside it", "search", body=RecallBody,
          answer=RecallAnswer, params=(AGENT, Param("format", "hook: the agent payload in, its hook's JSON out"),
                                       Param("event", "the hook event to answer as (default: the agent's prompt "
                                             "event)"),
                                       Param("budget_ms", "how long the caller waits", "integer"), *HOOK_FALLBACKS)),
    Route("GET", "/v1/pages", "Read one page and its lineage of corrections", "pages", answer=PageAnswer,
          params=REF_PARAMS),
    Route("POST", "/v1/pages", "Store a structured memory, or correct one", "pages", body=MemoryBody,
          answer=Stored, status=201),
    Route("DELETE", "/v1/pages", "Remove a page (git history keeps it)", "pages", answer=Deleted, params=REF_PARAMS),
    Route("POST", "/v1/pages/pin", "Pin or unpin a page", "pages", body=PinBody, answer=Pinned),
    Route("GET", "/v1/pages/history", "A page's commits, newest first", "pages", answer=PageHistory,
          params=REF_PARAMS),
    Route("GET", "/v1/pages/at", "A page as a past commit left it", "pages", answer=PageAnswer,
          params=(*REF_PARAMS, Param("rev", "a commit id, HEAD or HEAD~N"))),
    Route("POST", "/v1/pages/restore", "Write a page back as a revision left it", "pages", body=RestoreBody,
          answer=Restored),
    Route("POST", "/v1/feedback", "Say whether a page helped", "pages", body=FeedbackBody, answer=FeedbackAnswer),
    Route("GET", "/v1/recent", "The newest pages and sessions", "pages", answer=Recent, params=(PROJECT, limit(10, 100))),
    Route("GET", "/v1/meta", "Counts by scope and kind, projects, agents", "pages", answer=Meta, params=(PROJECT,)),
    Route("GET", "/v1/lint", "The wiki's problems, with a fix for each", "pages", answer=Lint),
    Route("GET", "/v1/projects", "Every project, and the old names that mean one now", "projects",
          answer=Projects),
    Route("POST", "/v1/projects/rename", "Rename a project", "projects", body=ProjectMoveBody,
          answer=ProjectChange, admin=True),
    Route("POST", "/v1/projects/merge", "Merge one project into another", "projects", body=ProjectMoveBody,
          answer=ProjectChange, admin=True),
    Route("POST", "/v1/projects/purge", "Turn every page of a project into a tombstone", "projects",
          body=PurgeBody, answer=Purged, admin=True),
    Route("POST", "/v1/sessions/{session_id}/move", "Move a session to another project", "projects",
          body=SessionMoveBody, answer=ProjectChange, admin=True, params=(SESSION_PATH,)),
    Route("GET", "/v1/sessions/{session_id}/observations", "A session's events, in order", "pages",
          answer=Observations, params=(SESSION_PATH,)),
    Route("POST", "/v1/sessions/{session_id}/finalize", "Compile a session now", "pages", answer=Finalized,
          params=(SESSION_PATH,)),
    Route("POST", "/v1/handoffs", "Leave a handoff", "coordination", body=HandoffBody, answer=HandoffBegun,
          status=201),
    Route("GET", "/v1/handoffs", "List handoffs", "coordination", answer=Handoffs,
          params=(PROJECT, Param("state", "open, accepted, expired or cancelled"))),
    Route("POST", "/v1/handoffs/accept", "Claim the handoff waiting for a session", "coordination",
          body=AcceptBody, answer=MaybeHandoff),
    Route("POST", "/v1/handoffs/{handoff_id}/cancel", "Cancel an open handoff", "coordination", answer=OneHandoff,
          params=(Param("handoff_id", "the handoff's id", where="path"),)),
    Route("POST", "/v1/messages", "Send a message to another project", "coordination", body=MessageBody,
          answer=MessageSent, status=201),
    Route("GET", "/v1/messages", "List messages", "coordination", answer=Messages,
          params=(PROJECT, Param("state", "open, popped, expired or cancelled"))),
    Route("POST", "/v1/messages/pop", "Take a project's oldest open messages", "coordination", body=PopBody,
          answer=Messages),
    Route("POST", "/v1/messages/{message_id}/cancel", "Cancel an open message", "coordination", answer=OneMessage,
          params=(Param("message_id", "the message's id", where="path"),)),
    Route("POST", "/v1/forget-sweep", "Remove cold pages (tombstones keep their ids)", "maintenance",
          body=SweepBody, answer=Sweep, admin=True),
    Route("GET", "/v1/tombstones", "Pages the sweep removed", "maintenance", answer=Tombstones,
          params=(PROJECT, limit(100, 10_000)), admin=True),
    Route("POST", "/v1/sync", "Pull and push the wiki with its git remote (naming another remote: the admin "
          "token only)", "maintenance", body=SyncBody, answer=Synced),
    Route("GET", "/v1/export", "Every page and tombstone, in batches, for a mirror", "maintenance",
          answer=ExportBatch, params=(Param("cursor", "where the last batch ended"), limit(100, MAX_EXPORT_BATCH))),
    Route("POST", "/v1/reindex", "Rebuild the index from the wiki and the journal", "maintenance",
          answer=Reindexed, admin=True),
    Route("GET", "/v1/users", "Team users", "team", answer=Users, admin=True),
    Route("POST", "/v1/users", "Add a team user; the answer holds its token, once", "team", body=UserBody,
          answer=UserAdded, status=201, admin=True),
    Route("POST", "/v1/users/{name}/revoke", "Revoke a user's token", "team", answer=OneUser, admin=True,
          params=(Param("name", "the user", where="path"),)),
    Route("GET", "/v1/audit", "The audit log, newest first", "team", answer=Audit, admin=True,
          params=(limit(100, 10_000), Param("user", "only this user's writes"))),
    Route("POST", "/v1/ui/login", "A one-time login code into the web view", "web view",
          answer=LoginCode),
    Route("POST", "/v1/ui/login/state", "Whether a login code still waits to be used", "web view",
          body=LoginCodeBody, answer=LoginState),
)


def route_param(method: str, path: str, name: str) -> Param:
    """The parameter ``name`` the route ``method path`` declares (KeyError when it declares none)."""
    for route in ROUTES:
        if route.method == method and route.path == path:
            return next(p for p in route.params if p.name == name)
    raise KeyError(f"{method} {path}")
