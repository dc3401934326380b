"""Tool results: structured content plus a short text, or an error the model can read.

Every daemon error (``AiMemoryError``) becomes a ``CallToolResult`` with ``is_error`` set, whose
text names the problem and what to do about it; a tool never lets one escape as a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations

from ai_memory.core.errors import (
    AiMemoryError, Conflict, DaemonUnavailable, GatewayUnreachable, InputError, NotFound, Overloaded, StorageError,
)

_LABELS: tuple[tuple[type[AiMemoryError], str], ...] = (
    (GatewayUnreachable, "gateway_unreachable"), (DaemonUnavailable, "daemon unavailable"), (InputError, "invalid input"), (NotFound, "not found"),
    (Conflict, "conflict"), (Overloaded, "busy"), (StorageError, "storage failure"),
)


def ok(data: Mapping[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=dict(data))


def failure(exc: AiMemoryError) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=error_text(exc))], is_error=True)


def error_text(exc: AiMemoryError) -> str:
    label = next((name for kind, name in _LABELS if isinstance(exc, kind)), "error")
    text = f"{label}: {exc.message}"
    if exc.detail:
        text += f"; {exc.detail}"
    if isinstance(exc, Overloaded):
        text += f"; retry in {max(1, round(exc.retry_after))} s"
    if isinstance(exc, GatewayUnreachable):  # breaker_open: no network was touched
        text += f"; breaker_open, retry in {max(1, round(exc.retry_in_ms / 1000))} s"
    if exc.fields.get("id") or exc.fields.get("path"):  # a duplicate or an already-corrected memory
        text += "\nexisting memory: " + ", ".join(f"{k} {exc.fields[k]}" for k in ("id", "path") if exc.fields.get(k))
    record = exc.fields.get("record")
    if isinstance(record, dict) and record.get("state"):
        text += f"\nthe record is now {record['state']}"
    return text


def attempt(call: Callable[[], Mapping[str, Any]], render: Callable[[Mapping[str, Any]], str]) -> CallToolResult:
    """Run one daemon call; its answer becomes structured content and ``render``'s text."""
    try:
        data = call()
    except AiMemoryError as exc:
        return failure(exc)
    return ok(data, render(data))


def read_only(title: str) -> ToolAnnotations:
    """Reads only: hosts may run it without asking, and in parallel with other reads."""
    return ToolAnnotations(title=title, read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                           open_world_hint=False)


def writes(title: str, *, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """Changes memory. Every tool's world is closed: only this machine's daemon."""
    return ToolAnnotations(title=title, read_only_hint=False, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)
