"""What each route answers: typed dicts a route still builds as plain JSON (the contract test
holds every real answer to them)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from ai_memory.core.wire.values import HandoffState, Json, MessageState

__all__ = ["AgentRow", "Audit", "AuditEntry", "BatchItem", "Briefing", "Correction", "Deleted", "EnvelopeStored",
    "ExportBatch", "Failure", "FeedbackAnswer", "Finalized", "Finding", "Handoff", "HandoffBegun", "Handoffs",
    "Health", "Hit", "HookAccepted", "HookBatch", "Lint", "LoginCode", "LoginState", "MaybeHandoff", "Message",
    "MessageSent", "Messages", "Meta", "Moved", "Observation", "Observations", "OneHandoff", "OneMessage",
    "OneUser", "PageAnswer", "PageHistory", "Pinned", "ProjectChange", "ProjectRow", "Projects", "Purged",
    "QueryAnswer", "RawHit", "RecallAnswer", "RecallItem", "Recent", "RecentPage", "RecentSession", "Reindexed",
    "Restored", "Revision", "Snippet", "Status", "Stored", "Sweep", "Synced", "Tombstones", "User", "UserAdded",
    "Users"]


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


Moved = TypedDict("Moved", {"from": str, "to": str})
ProjectChange = TypedDict("ProjectChange", {
    "dry_run": bool,
    "verb": str,
    "from": str,
    "to": str,
    "moved": Annotated[list[Moved], Field(description="every file moved")],
    "renamed": Annotated[list[Moved], Field(description="moved under another name (a clash)")],
    "frontmatter_rewritten": list[str],
    "frontmatter_not_rewritten": list[str],
    "links_left": list[str],
    "removed": list[str],
    "git_commit": str | None,
    "rows_moved": int,
})
ProjectChange.__doc__ = "What a rename, a merge or a session's move did (or, with dry_run, would do)."


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
