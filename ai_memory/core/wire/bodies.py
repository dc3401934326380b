"""What each route's JSON body may hold: shape, types and bounds (``parse`` checks them)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from typing_extensions import NotRequired, TypedDict

from ai_memory.core.wire.values import (
    DEFAULT_TTL_S, MAX_POP, MAX_QUERY_CHARS, MAX_QUERY_PROJECTS, MAX_TTL_S, IdempotencyKey, Kind, Line,
    LinesOrLine, Moment, NoProject, Owner, ProjectName, Ref, Scope, SearchKind, Signal, Tags, strict_body,
)

__all__ = ["AcceptBody", "FeedbackBody", "HandoffBody", "LoginCodeBody", "MemoryBody", "MessageBody",
    "PinBody", "PopBody", "ProjectMoveBody", "PurgeBody", "QueryBody", "RecallBody", "RestoreBody",
    "SessionMoveBody", "SweepBody", "SyncBody", "UserBody"]


@strict_body
class QueryBody(TypedDict):
    """A search."""
    q: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the text to search for")]
    project: NotRequired[str | None]
    projects: NotRequired[Annotated[list[str], Field(max_length=MAX_QUERY_PROJECTS)] | str | None]
    all: NotRequired[Annotated[bool | None, Field(description="every project the caller may see")]]
    k: NotRequired[Annotated[int, Field(ge=1, le=100, description="how many hits (10)")]]
    kind: NotRequired[Annotated[list[SearchKind], Field(max_length=len(SearchKind.__args__))] | SearchKind | None]
    scope: NotRequired[Scope | None]
    as_of: NotRequired[Annotated[str | None, Field(max_length=64, description="an ISO date or timestamp")]]
    include_superseded: NotRequired[bool | None]
    min_score: NotRequired[float | None]
    explain: NotRequired[Annotated[bool | None, Field(description="each hit's streams, features and formula")]]
    profile: NotRequired[Annotated[bool | None, Field(description="the time of each stage, in ms")]]
    owner: NotRequired[Owner]


@strict_body
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
    supersedes: NotRequired[Annotated[Ref | None, Field(description="the id or path of the memory this corrects")]]
    supersede_reason: NotRequired[Line | None]
    idempotency_key: NotRequired[IdempotencyKey | None]
    owner: NotRequired[Owner]


@strict_body
class PinBody(TypedDict):
    """Pin a page (the sweep keeps it; the briefing lists a pinned rule or decision) or unpin it."""
    path: NotRequired[Ref]
    id: NotRequired[Ref]
    pinned: NotRequired[bool]
    owner: NotRequired[Owner]


@strict_body
class FeedbackBody(TypedDict):
    """Whether a page helped."""
    path: NotRequired[Ref]
    id: NotRequired[Ref]
    signal: Signal
    owner: NotRequired[Owner]


@strict_body
class RestoreBody(TypedDict):
    """Write a page back as a revision left it, as a new commit."""
    path: NotRequired[Ref]
    id: NotRequired[Ref]
    rev: Annotated[str, Field(max_length=64, description="a commit id from the page's history, HEAD or HEAD~N")]
    owner: NotRequired[Owner]


@strict_body
class HandoffBody(TypedDict):
    """A handoff left on purpose: the next session of the project (or ``to_agent``) takes it."""
    summary: Line
    project: NotRequired[ProjectName | NoProject | None]
    cwd: NotRequired[Line | None]
    next_steps: NotRequired[LinesOrLine | None]
    open_questions: NotRequired[LinesOrLine | None]
    files_touched: NotRequired[LinesOrLine | None]
    from_agent: NotRequired[Line | None]
    to_agent: NotRequired[Line | None]
    model: NotRequired[Line | None]
    session_id: NotRequired[Line | None]
    shared: NotRequired[Annotated[bool, Field(description="visible to every user of a team daemon")]]
    idempotency_key: NotRequired[IdempotencyKey | None]
    owner: NotRequired[Owner]


@strict_body
class AcceptBody(TypedDict):
    """Claim the handoff waiting for this session: exactly one caller gets it."""
    cwd: Line
    session_id: Line
    agent: NotRequired[Line | None]
    project: NotRequired[ProjectName | NoProject | None]
    owner: NotRequired[Owner]


@strict_body
class MessageBody(TypedDict):
    """A message to another project's next session."""
    to_project: ProjectName
    body: Annotated[str, Field(max_length=64 << 10)]
    from_project: NotRequired[Line | None]
    from_agent: NotRequired[Line | None]
    ttl_s: NotRequired[Annotated[int, Field(ge=1, le=MAX_TTL_S, description=(
        f"seconds before it expires ({DEFAULT_TTL_S // 86400} days)"))]]
    idempotency_key: NotRequired[IdempotencyKey | None]
    owner: NotRequired[Owner]


@strict_body
class PopBody(TypedDict):
    """Take the oldest open messages of a project; each is delivered to one caller only."""
    project: ProjectName
    limit: NotRequired[Annotated[int, Field(ge=1, le=MAX_POP)]]
    session_id: NotRequired[Line | None]
    owner: NotRequired[Owner]


@strict_body
class RecallBody(TypedDict):
    """A prompt (or an agent's prompt hook payload: its other fields are read as the agent sent them)."""
    prompt: Annotated[str, Field(max_length=1 << 20)]
    project: NotRequired[str | None]
    cwd: NotRequired[str | None]
    session_id: NotRequired[str | None]
    explain: NotRequired[bool | None]
    owner: NotRequired[Owner]


# The functional form: ``from`` is a keyword, and the key on the wire is the key the type names.
ProjectMoveBody = TypedDict("ProjectMoveBody", {
    "from": Annotated[str, Field(max_length=128, description="the project's name now")],
    "to": Annotated[str, Field(max_length=128)],
    "dry_run": NotRequired[bool],
})
ProjectMoveBody.__doc__ = "Rename a project, or merge ``from`` into ``to``."
strict_body(ProjectMoveBody)


@strict_body
class PurgeBody(TypedDict):
    """Every page of a project becomes a tombstone."""
    project: Annotated[str, Field(max_length=128)]
    confirm: NotRequired[Annotated[bool, Field(description="must be true")]]
    dry_run: NotRequired[bool]


@strict_body
class SessionMoveBody(TypedDict):
    """A session recorded under the wrong project moves, with its page and handoff."""
    project: Annotated[str, Field(max_length=128)]
    dry_run: NotRequired[bool]


@strict_body
class SweepBody(TypedDict):
    """The forget sweep; ``dry_run`` lists what it would remove."""
    dry_run: NotRequired[bool]


@strict_body
class SyncBody(TypedDict):
    """Pull and push the wiki with a git remote."""
    remote: NotRequired[Annotated[str | None, Field(max_length=2000)]]


@strict_body
class UserBody(TypedDict):
    """A team user to add."""
    name: Annotated[str, Field(max_length=64)]


@strict_body
class LoginCodeBody(TypedDict):
    """A pending web-view login code."""
    code: Annotated[str, Field(max_length=200)]
