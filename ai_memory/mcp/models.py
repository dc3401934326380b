"""The MCP tools' argument types and output models.

The argument types are the HTTP API's own (``core.wire``), so a tool and the route it calls take
the same values. The output models name the fields an agent relies on and allow the rest
(``extra="allow"``): a tool answers with what its route answers, or, through a remote client
whose daemon cannot be reached, with the local fallback's labelled answer (a pending handoff, a
lexical search), which the route's contract does not describe.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.wire import (
    HandoffState, ItemList, Kind, MessageState, ProjectName, Ref, Scope, SearchKind, Signal,
)

__all__ = [
    "AcceptOut", "BriefingOut", "DeletedOut", "FeedbackOut", "HandoffListOut", "HandoffOut", "HandoffState",
    "Items", "Kind", "LintOut", "MessageListOut", "MessageOut", "MessageState", "MetaOut", "ObservationsOut",
    "PageOut", "ProjectName", "QueryOut", "RecentOut", "RecordId", "Ref", "Scope", "SearchKind", "Signal",
    "StatusOut", "StoredOut",
]

Items = ItemList  # an agent sends a list (the HTTP API also takes one line as a string)
RecordId = Annotated[str, Field(min_length=1, max_length=200)]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Hit(_Open):
    path: str
    title: str
    type: str
    project: str
    score: float
    snippet: str


class QueryOut(_Open):
    hits: list[Hit] = Field(description="pages, best first")
    raw_hits: list[dict[str, Any]] = Field(description="observations matching the text, when no page did")
    streams: list[str] = Field(description="retrieval streams that contributed")


class PageOut(_Open):
    path: str
    title: str
    type: str
    project: str
    uid: str | None = Field(description="the memory id (None for pages written by hand)")
    body: str = Field(description="the page text, cut to max_chars when truncated")
    frontmatter: dict[str, Any]
    lineage: list[dict[str, Any]] = Field(description="the chain of corrections, oldest first; [] when none")
    truncated: bool
    revision: dict[str, Any] | None = Field(default=None, description=(
        "for a past version (at): the commit, its time, author and message"))


class RecentOut(_Open):
    pages: list[dict[str, Any]] = Field(description="newest pages: path, title, type, project, updated")
    sessions: list[dict[str, Any]] = Field(description="newest sessions: id, agent, project, cwd, events")


class StatusOut(_Open):
    version: str
    data_dir: str
    counts: dict[str, int]


class MetaOut(_Open):
    project: str | None
    counts: dict[str, dict[str, int]] = Field(description="live memories by scope, then kind")
    superseded: int
    expired: int
    projects: list[dict[str, Any]]
    agents: list[dict[str, Any]]


class BriefingOut(_Open):
    project: str
    text: str = Field(description="the briefing as markdown")
    sessions: int


class ObservationsOut(_Open):
    session_id: str
    observations: list[dict[str, Any]] = Field(description="in the order they happened")
    total: int = Field(description="how many the session has")
    truncated: bool


class Finding(_Open):
    rule: str = Field(description="contradiction, broken-link, orphan, duplicate-title, expired, broken-frontmatter, "
                                  "oversized, index-drift or conflict-copy")
    path: str = Field(description="the page the finding is about")
    detail: str
    fix: str = Field(description="what to do about it")


class LintOut(_Open):
    clean: bool = Field(description="true when nothing was found")
    pages: int
    counts: dict[str, int] = Field(description="findings per rule")
    findings: list[Finding]
    total: int = Field(description="how many findings there are in all")
    truncated: bool


class StoredOut(_Open):
    id: str = Field(description="the memory id; pass it to memory_correct or memory_read_page")
    path: str
    created: bool = Field(description="false when idempotency_key matched an earlier write")
    supersedes: str | None


class DeletedOut(_Open):
    deleted: str = Field(description="the path of the removed page")
    id: str | None


class FeedbackOut(_Open):
    path: str
    id: str | None
    signal: str
    salience_before: float
    salience: float = Field(description="the page's salience now, within [0.25, 2.0] (1.0 by default)")
    feedback_count: int


class Handoff(_Open):
    id: str
    project: str | None
    state: str
    summary: str


class HandoffOut(_Open):
    handoff: Handoff


class HandoffListOut(_Open):
    handoffs: list[Handoff]


class AcceptOut(_Open):
    handoff: Handoff | None = Field(description="the claimed handoff, or null when none was waiting")


class Message(_Open):
    id: str
    to_project: str
    body: str
    state: str


class MessageOut(_Open):
    message: Message


class MessageListOut(_Open):
    messages: list[Message]
