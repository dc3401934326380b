"""The MCP tools' argument types and output schemas: the HTTP API's own (``core.wire``), so a
tool and the route it calls cannot disagree. Where a tool answers more than its route (a page
cut to ``max_chars`` says so), the output extends the route's answer."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ai_memory.core.wire import (
    Briefing, Deleted, FeedbackAnswer, HandoffState, Handoffs, ItemList, Kind, Lint, MaybeHandoff,
    Messages, MessageState, Meta, Observations, OneHandoff, OneMessage, PageAnswer, ProjectName,
    QueryAnswer, Recent, Ref, Scope, SearchKind, Signal, Status, Stored,
)

__all__ = [
    "AcceptOut", "BriefingOut", "DeletedOut", "FeedbackOut", "HandoffListOut", "HandoffOut", "HandoffState",
    "Items", "Kind", "LintOut", "MessageListOut", "MessageOut", "MessageState", "MetaOut", "ObservationsOut",
    "PageOut", "ProjectName", "QueryOut", "RecentOut", "RecordId", "Ref", "Scope", "SearchKind", "Signal",
    "StatusOut", "StoredOut",
]

Items = ItemList  # an agent sends a list (the HTTP API also takes one line as a string)
RecordId = Annotated[str, Field(min_length=1, max_length=200)]


class PageOut(PageAnswer):
    truncated: Annotated[bool, Field(description="the body was cut to max_chars")]


QueryOut = QueryAnswer
RecentOut = Recent
StatusOut = Status
MetaOut = Meta
BriefingOut = Briefing
ObservationsOut = Observations
LintOut = Lint
StoredOut = Stored
DeletedOut = Deleted
FeedbackOut = FeedbackAnswer
HandoffOut = OneHandoff
MessageOut = OneMessage
HandoffListOut = Handoffs
AcceptOut = MaybeHandoff
MessageListOut = Messages
