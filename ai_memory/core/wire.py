"""The HTTP API's one contract: what each route accepts and what it answers.

The routes validate their JSON bodies through ``parse`` (a 400 naming the field), the client
annotates its results with the answers (``client/api.py``), the MCP tools take their argument
types and output schemas from here, and ``core.openapi`` turns ``ROUTES`` into the OpenAPI
document the daemon serves at ``/v1/openapi.json`` and the docs print.

Bodies check shape, types and bounds; what needs the daemon's state or the sanitizer (a project
that exists, an empty summary) stays with the use case that owns the rule. Answers are typed
dicts: a route still builds plain JSON, and ``tests/test_wire_contract.py`` fails when a real
answer holds a field, or a type, this file does not declare.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeVar

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

from ai_memory.core.errors import InputError
from ai_memory.core.memory import MAX_LIST, PROJECT_NAME
from ai_memory.core.page import GLOBAL_PROJECT

T = TypeVar("T")

# -- the values many routes share (tests/test_wire_contract.py keeps the enums equal to core's)
Kind = Literal["fact", "decision", "preference", "episode", "gotcha", "procedure", "rule", "concept", "note"]
SearchKind = Literal["fact", "decision", "preference", "episode", "gotcha", "procedure", "rule", "concept",
                     "note", "session"]
Scope = Literal["project", "_global", "private"]
HandoffState = Literal["open", "accepted", "expired", "cancelled"]
MessageState = Literal["open", "popped", "expired", "cancelled"]
Signal = Literal["helpful", "not_helpful", "stale", "wrong"]

ProjectName = Annotated[str, Field(pattern=rf"^(?:{GLOBAL_PROJECT}|{PROJECT_NAME})$", description=(
    "a project name: letters, digits, '.', '_' and '-', up to 128 characters; _global for every project"))]
Ref = Annotated[str, Field(min_length=1, max_length=1000,
                           description="a memory id (e.g. 01J...) or a wiki path such as api/decisions/x.md")]
Owner = Annotated[str, Field(max_length=64, description=(
    "who the write is for; only the admin token may name one (a team user's token speaks for itself)"))]
IdempotencyKey = Annotated[str, Field(max_length=4096, description="a retry with the same key returns the first record")]
MAX_ITEMS = 50  # the lines of a handoff's list
ItemList = Annotated[list[str], Field(max_length=MAX_ITEMS, description=f"lines, at most {MAX_ITEMS}")]
Items = Annotated[ItemList | str, Field(description=f"lines (at most {MAX_ITEMS}), or one line")]
Tags = Annotated[list[str] | str, Field(description=f"at most {MAX_LIST}, or one")]
Line = Annotated[str, Field(description="one line of text (the sanitizer caps its length)")]
Moment = Annotated[str, Field(max_length=64, description="an ISO 8601 timestamp in UTC, e.g. 2026-12-07T05:04:13.120000Z")]
MAX_QUERY_CHARS = 8192
MAX_QUERY_PROJECTS = 64
MAX_POP = 50
Json = dict[str, Any]


def _body(cls: type[T]) -> type[T]:
    """A request body: strict types (no "5" for 5, no true for 1); fields it does not name are ignored."""
    return with_config(ConfigDict(strict=True))(cls)


# -- request bodies

@_body
class QueryBody(TypedDict):
    """A search."""
    q: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the text to search for")]
    project: NotRequired[str | None]
    projects: NotRequired[Annotated[list[str], Field(max_length=MAX_QUERY_PROJECTS)] | str]
    all: NotRequired[Annotated[bool, Field(description="every project the caller may see")]]
    k: NotRequired[Annotated[int, Field(ge=1, le=100, description="how many hits (10)")]]
    kind: NotRequired[list[SearchKind] | SearchKind]
    scope: NotRequired[Scope | None]
    as_of: NotRequired[Annotated[str | None, Field(max_length=64, description="an ISO date or timestamp")]]
    include_superseded: NotRequired[bool]
    min_score: NotRequired[float | None]
    explain: NotRequired[Annotated[bool, Field(description="each hit's streams, features and formula")]]
    profile: NotRequired[Annotated[bool, Field(description="the time of each stage, in ms")]]
    owner: NotRequired[Owner]


@_body
class MemoryBody(TypedDict):
    """A structured memory to store, or (``supersedes``) the correction of one."""
    text: Annotated[str, Field(max_length=1 << 20)]
    kind: Kind
    project: ProjectName
    title: NotRequired[Line | None]
    scope: NotRequired[Scope | None]
    tags: NotRequired[Tags | None]
    entities: NotRequired[Tags | None]
    source: NotRequired[Line | None]
    expires_at: NotRequired[Moment | None]
    supersedes: NotRequired[Annotated[str | None, Field(max_length=200, description="the id of the memory this corrects")]]
    supersede_reason: NotRequired[Line | None]
    idempotency_key: NotRequired[IdempotencyKey | None]
    owner: NotRequired[Owner]


@_body
class PinBody(TypedDict):
    """Pin a page (the sweep keeps it; the briefing lists a pinned rule or decision) or unpin it."""
    path: NotRequired[Ref]
    id: NotRequired[Ref]
    pinned: NotRequired[bool]
    owner: NotRequired[Owner]


@_body
class FeedbackBody(TypedDict):
    """Whether a page helped."""
    path: NotRequired[Ref]
    id: NotRequired[Ref]
    signal: Signal
    owner: NotRequired[Owner]


@_body
class RestoreBody(TypedDict):
    """Write a page back as a revision left it, as a new commit."""
    path: NotRequired[Ref]
    id: NotRequired[Ref]
    rev: Annotated[str, Field(max_length=64, description="a commit id from the page's history, HEAD or HEAD~N")]
    owner: NotRequired[Owner]


@_body
class HandoffBody(TypedDict):
    """A handoff left on purpose: the next session of the project (or ``to_agent``) takes it."""
    summary: Line
    project: NotRequired[ProjectName | None]
    cwd: NotRequired[Line | None]
    next_steps: NotRequired[Items | None]
    open_questions: NotRequired[Items | None]
    files_touched: NotRequired[Items | None]
    from_agent: NotRequired[Line | None]
    to_agent: NotRequired[Line | None]
    model: NotRequired[Line | None]
    session_id: NotRequired[Line | None]
    shared: NotRequired[Annotated[bool, Field(description="visible to every user of a team daemon")]]
    idempotency_key: NotRequired[IdempotencyKey | None]
    owner: NotRequired[Owner]


@_body
class AcceptBody(TypedDict):
    """Claim the handoff waiting for this session: exactly one caller gets it."""
    cwd: Line
    session_id: Line
    agent: NotRequired[Line | None]
    project: NotRequired[ProjectName | None]
    owner: NotRequired[Owner]


@_body
class MessageBody(TypedDict):
    """A message to another project's next session."""
    to_project: ProjectName
    body: Annotated[str, Field(max_length=64 << 10)]
    from_project: NotRequired[Line | None]
    from_agent: NotRequired[Line | None]
    ttl_s: NotRequired[Annotated[int, Field(description="seconds before it expires (7 days)")]]
    idempotency_key: NotRequired[IdempotencyKey | None]
    owner: NotRequired[Owner]


@_body
class PopBody(TypedDict):
    """Take the oldest open messages of a project; each is delivered to one caller only."""
    project: ProjectName
    limit: NotRequired[Annotated[int, Field(ge=1, le=MAX_POP)]]
    session_id: NotRequired[Line | None]
    owner: NotRequired[Owner]


@_body
class RecallBody(TypedDict):
    """A prompt (or an agent's prompt hook payload: its other fields are read as the agent sent them)."""
    prompt: Annotated[str, Field(max_length=1 << 20)]
    project: NotRequired[str | None]
    cwd: NotRequired[str | None]
    session_id: NotRequired[str | None]
    explain: NotRequired[bool]


@_body
class ProjectMoveBody(TypedDict):
    """Rename a project, or merge ``from`` into ``to``."""
    from_: Annotated[str, Field(alias="from", max_length=128)]
    to: Annotated[str, Field(max_length=128)]
    dry_run: NotRequired[bool]


@_body
class PurgeBody(TypedDict):
    """Every page of a project becomes a tombstone."""
    project: Annotated[str, Field(max_length=128)]
    confirm: NotRequired[Annotated[bool, Field(description="must be true")]]
    dry_run: NotRequired[bool]


@_body
class SessionMoveBody(TypedDict):
    """A session recorded under the wrong project moves, with its page and handoff."""
    project: Annotated[str, Field(max_length=128)]
    dry_run: NotRequired[bool]


@_body
class SweepBody(TypedDict):
    """The forget sweep; ``dry_run`` lists what it would remove."""
    dry_run: NotRequired[bool]


@_body
class SyncBody(TypedDict):
    """Pull and push the wiki with a git remote."""
    remote: NotRequired[Annotated[str | None, Field(max_length=2000)]]


@_body
class UserBody(TypedDict):
    """A team user to add."""
    name: Annotated[str, Field(max_length=64)]


@_body
class LoginCodeBody(TypedDict):
    """A pending web-view login code."""
    code: Annotated[str, Field(max_length=200)]


class Empty(TypedDict):
    """No fields."""


# -- answers

class Health(TypedDict):
    ok: bool
    version: str


class Status(TypedDict):
    """What the daemon holds and how each of its parts is doing."""
    version: str
    python: str
    sqlite: str
    data_dir: str
    pid: int
    uptime_s: float
    counts: Annotated[dict[str, int], Field(description="sessions, observations, pages")]
    agents: Annotated[dict[str, str], Field(description="each agent's last event, UTC")]
    embeddings: Json
    wiki: Json
    spool: Json
    quota: Json
    llm: Json
    writer: Json
    mounts: Annotated[dict[str, str], Field(description="what else is served at a path (/mcp)")]


class Snippet(TypedDict):
    snippet: Annotated[str, Field(description="the lines that answer")]
    highlights: Annotated[list[list[int]], Field(description="where the query's words are in it: [start, end]")]


class Hit(TypedDict):
    """A page that answers, best first."""
    path: str
    title: str
    type: str
    project: str
    score: float
    confidence: Annotated[float, Field(description="how likely the hit answers, 0 to 1")]
    snippet: Annotated[str, Field(description="the lines that answer")]
    highlights: list[list[int]]
    session_id: str | None
    updated: str | None
    evidence: Annotated[list[Json], Field(description="the turns the hit was found by, with what each said")]
    explain: NotRequired[Json]
    valid_from: NotRequired[Annotated[str, Field(description="as_of: when this version became the page")]]
    valid_to: NotRequired[Annotated[str | None, Field(description="as_of: when a later version replaced it")]]
    superseded_by: NotRequired[str | None]


class RawHit(TypedDict):
    """An observation matching the text, when no page did."""
    id: str
    session_id: str
    project: str | None
    event: str
    occurred_at: str
    score: float
    snippet: str
    highlights: list[list[int]]


class QueryAnswer(TypedDict):
    hits: list[Hit]
    raw_hits: list[RawHit]
    streams: Annotated[list[str], Field(description="the retrieval streams that contributed")]
    profile_ms: NotRequired[dict[str, float]]


class RecallItem(TypedDict):
    path: str
    kind: str
    date: str
    line: str
    score: float
    confidence: float


class RecallAnswer(TypedDict):
    project: str | None
    items: list[RecallItem]
    text: Annotated[str, Field(description="the fenced block handed to the agent; empty when memory stays silent")]
    explain: NotRequired[Json]


class Correction(TypedDict):
    id: str
    path: str
    title: str
    created: str | None
    supersedes: str | None
    superseded_by: str | None
    reason: str | None


class Revision(TypedDict):
    commit: str
    short: str
    time: str
    author: str
    message: str
    removed: bool


class PageAnswer(TypedDict):
    """A page's index row and text."""
    path: str
    title: str
    type: str
    project: str
    uid: str | None
    body: str
    frontmatter: Json
    problems: list[str]
    lineage: Annotated[list[Correction], Field(description="the chain of corrections, oldest first; [] when none")]
    id: NotRequired[int]
    tier: NotRequired[str | None]
    summary: NotRequired[str | None]
    content_hash: NotRequired[str]
    mtime_ns: NotRequired[int]
    size: NotRequired[int]
    created: NotRequired[str | None]
    updated: NotRequired[str | None]
    session_id: NotRequired[str | None]
    agent: NotRequired[str | None]
    pinned: NotRequired[int]
    expires_at: NotRequired[str | None]
    supersedes: NotRequired[str | None]
    superseded_by: NotRequired[str | None]
    indexed_at: NotRequired[str]
    access_count: NotRequired[int]
    last_access_at: NotRequired[str | None]
    stem: NotRequired[str]
    scope: NotRequired[str | None]
    owner: NotRequired[str | None]
    norm_hash: NotRequired[str | None]
    idempotency_key: NotRequired[str | None]
    salience: NotRequired[float]
    feedback_count: NotRequired[int]
    revision: NotRequired[Annotated[Revision, Field(description="for a past version: the commit that left it so")]]


class Restored(TypedDict):
    path: str
    restored_from: Revision
    changed: Annotated[bool, Field(description="false when the page already read so")]
    commit: str | None


class PageHistory(TypedDict):
    path: str
    revisions: list[Revision]


class Stored(TypedDict):
    id: Annotated[str, Field(description="the memory id")]
    path: str
    created: Annotated[bool, Field(description="false when idempotency_key matched an earlier write")]
    supersedes: str | None


class Pinned(TypedDict):
    path: str
    id: str | None
    pinned: bool
    changed: bool


class Deleted(TypedDict):
    deleted: Annotated[str, Field(description="the path of the removed page")]
    id: str | None


class FeedbackAnswer(TypedDict):
    path: str
    id: str | None
    signal: str
    salience_before: float
    salience: Annotated[float, Field(description="within [0.25, 2.0], 1.0 by default")]
    feedback_count: int


class RecentPage(TypedDict):
    path: str
    title: str
    type: str
    project: str
    updated: str | None
    session_id: str | None


class RecentSession(TypedDict):
    id: str
    agent: str | None
    project: str | None
    cwd: str | None
    started_at: str | None
    last_event_at: str | None
    ended_at: str | None
    observation_count: int
    page_path: str | None
    events: int


class Recent(TypedDict):
    pages: list[RecentPage]
    sessions: list[RecentSession]


class ProjectRow(TypedDict):
    project: str
    pages: int
    sessions: int
    last_activity: str | None


class AgentRow(TypedDict):
    agent: str
    sessions: int
    last_seen: str | None


class Meta(TypedDict):
    project: str | None
    counts: Annotated[dict[str, dict[str, int]], Field(description="live memories by scope, then kind")]
    superseded: int
    expired: int
    projects: list[ProjectRow]
    agents: list[AgentRow]


class Projects(TypedDict):
    projects: list[ProjectRow]
    aliases: Annotated[dict[str, str], Field(description="an old name → the project it means now")]


class Handoff(TypedDict):
    id: str
    session_id: str | None
    project: str | None
    cwd: str | None
    from_agent: str | None
    to_agent: str | None
    summary: str
    open_questions: list[str]
    files_touched: list[str]
    next_steps: list[str]
    kind: str
    state: HandoffState
    page_path: str | None
    created_at: str
    accepted_at: str | None
    accepted_by_session: str | None
    owner: str | None
    shared: bool
    model: str | None
    idempotency_key: str | None


class Message(TypedDict):
    id: str
    to_project: str
    from_project: str | None
    from_agent: str | None
    owner: str | None
    body: str
    created_at: str
    expires_at: str
    state: MessageState
    popped_at: str | None
    popped_by_session: str | None
    idempotency_key: str | None


class HandoffBegun(TypedDict):
    handoff: Handoff
    created: bool


class OneHandoff(TypedDict):
    handoff: Handoff


class MaybeHandoff(TypedDict):
    handoff: Annotated[Handoff | None, Field(description="the claimed handoff, or null when none was waiting")]


class Handoffs(TypedDict):
    handoffs: list[Handoff]


class MessageSent(TypedDict):
    message: Message
    created: bool


class OneMessage(TypedDict):
    message: Message


class Messages(TypedDict):
    messages: list[Message]


class Briefing(TypedDict):
    project: str | None
    text: Annotated[str, Field(description="the briefing as markdown")]
    sessions: int
    handoff: Handoff | None
    handoffs: list[Handoff]
    messages: list[Message]


class Observation(TypedDict):
    id: str
    session_id: str
    agent: str | None
    event: str
    source_event: str | None
    project: str | None
    cwd: str | None
    tool_name: str | None
    prompt_id: str | None
    occurred_at: str
    received_at: str
    title: str | None
    body: str | None
    payload: NotRequired[Annotated[Json | None, Field(description="the hook payload as stored (large)")]]
    redactions: list[Json]
    owner: str | None


class Observations(TypedDict):
    session_id: str
    observations: Annotated[list[Observation], Field(description="in the order they happened")]
    total: NotRequired[int]
    truncated: NotRequired[bool]


class Finalized(TypedDict):
    session_id: str
    page: str | None


class Finding(TypedDict):
    rule: str
    path: str
    detail: str
    fix: str


class Lint(TypedDict):
    clean: bool
    pages: int
    counts: dict[str, int]
    findings: list[Finding]
    linted_at: NotRequired[str]
    total: NotRequired[int]
    truncated: NotRequired[bool]


class Sweep(TypedDict):
    dry_run: bool
    now: str
    removed: list[Json]
    skipped: list[Json]
    purged_tombstones: list[Json]
    git_commit: str | None
    params: dict[str, float]


class Tombstones(TypedDict):
    tombstones: list[Json]


class Synced(TypedDict):
    """What a sync did, summed over its rounds."""
    remote: str
    branch: str
    head: str
    remote_head: str | None
    pushed: bool
    rounds: int
    merges: Annotated[list[str], Field(description="merge or fast-forward, per round that merged")]
    written: list[str]
    removed: list[str]
    conflicts: Annotated[list[str], Field(description="conflict copies written beside the pages")]


class ExportBatch(TypedDict):
    items: list[Json]
    next_cursor: str | None


class Moved(TypedDict):
    from_: Annotated[str, Field(alias="from")]
    to: str


class ProjectChange(TypedDict):
    """What a rename, a merge or a session's move did (or, with dry_run, would do)."""
    dry_run: bool
    verb: str
    from_: Annotated[str, Field(alias="from")]
    to: str
    moved: Annotated[list[Moved], Field(description="every file moved")]
    renamed: Annotated[list[Moved], Field(description="moved under another name (a clash)")]
    frontmatter_rewritten: list[str]
    frontmatter_not_rewritten: list[str]
    links_left: list[str]
    removed: list[str]
    git_commit: str | None
    rows_moved: int


class Purged(TypedDict):
    """What a purge removed (or, with dry_run, would remove)."""
    dry_run: bool
    project: str
    removed: list[str]
    skipped: list[str]
    git_commit: str | None


class Reindexed(TypedDict):
    pages: int
    broken_pages: int
    observations: int
    rows_only_in_old_file: int
    vector_links_kept: int


class User(TypedDict):
    name: str
    created_at: str
    last_used_at: str | None
    revoked_at: str | None


class UserAdded(TypedDict):
    user: User
    token: Annotated[str, Field(description="shown this once")]


class OneUser(TypedDict):
    user: User


class Users(TypedDict):
    users: list[User]


class AuditEntry(TypedDict):
    id: int
    at: str
    user: str
    action: str
    target: str
    detail: str


class Audit(TypedDict):
    entries: list[AuditEntry]


class HookAccepted(TypedDict):
    id: str
    duplicate: bool


class EnvelopeStored(TypedDict):
    stored: bool
    id: str
    duplicate: bool


class BatchItem(TypedDict):
    """One event of a batch: its own status, and its id or its reason."""
    index: int
    status: int
    id: NotRequired[str]
    duplicate: NotRequired[bool]
    error: NotRequired[str]
    detail: NotRequired[str | None]


class HookBatch(TypedDict):
    accepted: int
    results: list[BatchItem]


class LoginCode(TypedDict):
    path: str
    code: str
    expires_in_s: float


class LoginState(TypedDict):
    pending: bool


class Failure(TypedDict):
    """Every 4xx and 5xx: what went wrong, and what to do about it."""
    error: str
    detail: str | None


# -- the routes

@dataclass(frozen=True)
class Param:
    name: str
    description: str
    type: str = "string"  # an OpenAPI scalar type
    where: Literal["query", "path"] = "query"


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
    notes: tuple[str, ...] = field(default=())


REF_PARAMS = (Param("path", "the page's wiki path (one of path or id)"), Param("id", "the memory id"))
PROJECT = Param("project", "a project name; default: every project the caller may see")
LIMIT = Param("limit", "how many at most", "integer")
AGENT = Param("agent", "the agent speaking: claude, codex, gemini, copilot, opencode, cursor, cline, ...")
SESSION_PATH = Param("session_id", "the agent's session id", where="path")

ROUTES: tuple[Route, ...] = (
    Route("GET", "/health", "Whether the daemon is up", "status", answer=Health, public=True),
    Route("GET", "/status", "What the daemon holds and how each part is doing", "status", answer=Status),
    Route("GET", "/v1/openapi.json", "This document", "status", answer=dict, public=True),
    Route("POST", "/hook", "Record one hook event (202 once it is durable)", "capture", answer=HookAccepted,
          status=202, raw_body="the agent's hook payload, as it sent it",
          params=(AGENT, Param("event", "the hook event, when the payload does not name it"),
                  Param("host", "the machine the event comes from"), Param("quiet", "1: answer 204, no body"))),
    Route("POST", "/hook/batch", "Record several hook events (the spool drain)", "capture", answer=HookBatch,
          raw_body="a list of payloads, or {events: [...]}", params=(AGENT,)),
    Route("POST", "/hook/envelope", "Record an event in its spool envelope", "capture", answer=EnvelopeStored,
          status=202, raw_body="{payload, agent, event?, idempotency_key?, host?, os?, captured_at?}"),
    Route("GET", "/v1/briefing", "The SessionStart briefing (reads only)", "coordination", answer=Briefing,
          params=(Param("cwd", "the agent's working directory"), AGENT, PROJECT,
                  Param("format", "hook: answer what the agent's SessionStart hook prints"))),
    Route("POST", "/v1/briefing", "The SessionStart briefing, claiming the session's handoff and messages",
          "coordination", answer=Briefing, raw_body="the agent's SessionStart payload ({session_id, cwd, ...})",
          params=(AGENT, Param("format", "hook: answer what the agent's SessionStart hook prints"))),
    Route("POST", "/v1/query", "Search memory", "search", body=QueryBody, answer=QueryAnswer),
    Route("POST", "/v1/recall", "What memory holds for a prompt, beside it", "search", body=RecallBody,
          answer=RecallAnswer, params=(AGENT, Param("format", "hook: the agent payload in, its hook's JSON out"),
                                       Param("budget_ms", "how long the caller waits", "integer"))),
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
    Route("GET", "/v1/recent", "The newest pages and sessions", "pages", answer=Recent, params=(PROJECT, LIMIT)),
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
          body=SweepBody, answer=Sweep),
    Route("GET", "/v1/tombstones", "Pages the sweep removed", "maintenance", answer=Tombstones,
          params=(PROJECT, LIMIT)),
    Route("POST", "/v1/sync", "Pull and push the wiki with its git remote", "maintenance", body=SyncBody,
          answer=Synced),
    Route("GET", "/v1/export", "Every page and tombstone, in batches, for a mirror", "maintenance",
          answer=ExportBatch, params=(Param("cursor", "where the last batch ended"), LIMIT)),
    Route("POST", "/v1/reindex", "Rebuild the index from the wiki and the journal", "maintenance",
          answer=Reindexed, admin=True),
    Route("GET", "/v1/users", "Team users", "team", answer=Users, admin=True),
    Route("POST", "/v1/users", "Add a team user; the answer holds its token, once", "team", body=UserBody,
          answer=UserAdded, status=201, admin=True),
    Route("POST", "/v1/users/{name}/revoke", "Revoke a user's token", "team", answer=OneUser, admin=True,
          params=(Param("name", "the user", where="path"),)),
    Route("GET", "/v1/audit", "The audit log, newest first", "team", answer=Audit, admin=True,
          params=(LIMIT, Param("user", "only this user's writes"))),
    Route("POST", "/v1/ui/login", "A one-time login code into the web view", "web view", body=Empty,
          answer=LoginCode),
    Route("POST", "/v1/ui/login/state", "Whether a login code still waits to be used", "web view",
          body=LoginCodeBody, answer=LoginState),
)


# -- validation

_ADAPTERS: dict[type, TypeAdapter[Any]] = {}  # a validator is built once per type, when first used


def adapter(kind: type[T]) -> TypeAdapter[T]:
    found = _ADAPTERS.get(kind)
    if found is None:
        found = _ADAPTERS[kind] = TypeAdapter(kind)
    return found


def parse(kind: type[T], value: object) -> T:
    """``value`` as ``kind``, or an InputError naming the first field that is wrong."""
    if not isinstance(value, dict):
        raise InputError("body must be a JSON object", detail=f"{kind.__name__}: {(kind.__doc__ or '').strip()}")
    try:
        return adapter(kind).validate_python(value)
    except ValidationError as exc:
        raise _input_error(exc) from None


def _input_error(exc: ValidationError) -> InputError:
    errors = exc.errors(include_url=False)
    first = next((e for e in errors if e["type"] == "literal_error"), errors[0])
    where = ".".join(str(part) for part in first["loc"] if isinstance(part, int) or "[" not in str(part))
    if first["type"] == "missing":
        return InputError(f"missing {where}")
    if first["type"] == "string_pattern_mismatch":
        return InputError(f"bad {where} name", detail=str(first.get("ctx", {}).get("pattern")))
    if first["type"] == "literal_error":
        where = ".".join(str(part) for part in first["loc"] if isinstance(part, str) and "[" not in part)
        given = str(first.get("input"))[:40]
        return InputError(f"unknown {where} {given!r}", detail="one of " + str(first.get("ctx", {}).get("expected")))
    return InputError(_said(where, first["type"], first.get("ctx") or {}) or f"{where}: {first['msg']}")


_MUST_BE = {"int_type": "an integer", "int_from_float": "an integer", "bool_type": "true or false",
            "string_type": "a string", "float_type": "a number", "list_type": "a list", "dict_type": "an object",
            "typed_dict_type": "an object"}


def _said(where: str, kind: str, ctx: dict[str, Any]) -> str | None:
    """The reason in the words the daemon's other refusals use, where one is known."""
    if kind in _MUST_BE:
        return f"{where} must be {_MUST_BE[kind]}"
    if kind in ("greater_than_equal", "less_than_equal"):
        bound = ctx.get("ge", ctx.get("le"))
        return f"{where} must be at {'least' if kind == 'greater_than_equal' else 'most'} {bound}"
    if kind == "string_too_long":
        return f"{where} must be at most {ctx.get('max_length')} characters"
    if kind == "string_too_short":
        return f"{where} must not be empty"
    if kind == "too_long":
        return f"too many {where}: at most {ctx.get('max_length')}"
    return None
