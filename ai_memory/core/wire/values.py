"""The values many routes share: enums, names, bounds, and how a body is validated (strictly)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import ConfigDict, Field, with_config

from ai_memory.core.memory import MAX_LIST, PROJECT_NAME, PROJECT_RULE
from ai_memory.core.page import GLOBAL_PROJECT

__all__ = ["DEFAULT_TTL_S", "HandoffState", "IdempotencyKey", "ItemList", "Json", "Kind", "Line", "LinesOrLine",
    "MAX_ITEMS", "MAX_POP", "MAX_QUERY_CHARS", "MAX_QUERY_PROJECTS", "MAX_TTL_S", "MessageState", "Moment",
    "NoProject", "Owner", "ProjectName", "Ref", "Scope", "SearchKind", "Signal", "Tags", "strict_body"]

T = TypeVar("T")

Kind = Literal["fact", "decision", "preference", "episode", "gotcha", "procedure", "rule", "concept", "note"]
SearchKind = Literal["fact", "decision", "preference", "episode", "gotcha", "procedure", "rule", "concept",
                     "note", "session"]
Scope = Literal["project", "_global", "private"]
HandoffState = Literal["open", "accepted", "expired", "cancelled"]
MessageState = Literal["open", "popped", "expired", "cancelled"]
Signal = Literal["helpful", "not_helpful", "stale", "wrong"]

ProjectName = Annotated[str, Field(pattern=rf"^(?:{GLOBAL_PROJECT}|{PROJECT_NAME})$",
                                   description=f"a project name: {PROJECT_RULE}; {GLOBAL_PROJECT} for every project")]
NoProject = Literal[""]  # an optional project left empty: as if absent
Ref = Annotated[str, Field(min_length=1, max_length=1000,
                           description="a memory id (e.g. 01J...) or a wiki path such as api/decisions/x.md")]
Owner = Annotated[str | None, Field(max_length=64, description=(
    "who the write is for; only the admin token may name one (a team user's token speaks for itself)"))]
IdempotencyKey = Annotated[str, Field(max_length=4096, description="a retry with the same key returns the first record")]
MAX_ITEMS = 50  # the lines of a handoff's list
ItemList = Annotated[list[str], Field(max_length=MAX_ITEMS, description=f"lines, at most {MAX_ITEMS}")]
LinesOrLine = Annotated[ItemList | str, Field(description=f"lines (at most {MAX_ITEMS}), or one line")]
Tags = Annotated[Annotated[list[str], Field(max_length=MAX_LIST)] | str, Field(description=f"at most {MAX_LIST}, or one")]
Line = Annotated[str, Field(description="one line of text (the sanitizer caps its length)")]
Moment = Annotated[str, Field(max_length=64, description="an ISO 8601 timestamp in UTC, e.g. 2026-12-07T05:04:13.120000Z")]
# Bounds on what one search may carry: 100,000 projects once cost 13-23 s of CPU.
MAX_QUERY_CHARS = 8192
MAX_QUERY_PROJECTS = 64
MAX_POP = 50  # messages one pop takes
DEFAULT_TTL_S = 14 * 24 * 3600  # a message waits this long for its project's next session
MAX_TTL_S = 365 * 24 * 3600
Json = dict[str, Any]


def strict_body(cls: type[T]) -> type[T]:
    """A request body: strict types (no "5" for 5, no true for 1); fields it does not name are ignored."""
    return with_config(ConfigDict(strict=True))(cls)
