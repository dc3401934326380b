"""Observations: one agent hook event, normalized and sanitized, ready for the store.

``build_observation`` is the only way from a raw hook payload to an ``Observation``; every text
it keeps has passed ``sanitize``/``sanitize_json``, so the store never sees raw agent text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ai_memory.core.agent_dialects import cursor_event_key, in_common_terms, speaking_agent
from ai_memory.core.agent_payloads import CWD_KEYS, as_meant, meant_kind
from ai_memory.core.clock import parse_utc, utc_iso
from ai_memory.core.errors import InputError
from ai_memory.core.events import EventKind, normalize_event
from ai_memory.core.ids import new_id
from ai_memory.core.names import project_name
from ai_memory.core.sanitizer import Sanitized, SanitizedJson, TextKind, cap, sanitize, sanitize_json
from ai_memory.core.tool_text import tool_body

# Per-field caps inside the stored payload; everything else is a 2 KiB excerpt. What an edit
# changed is kept whole up to 16 KiB (the payload as a whole is bounded at 16 KiB too).
FIELD_CAPS: dict[str, TextKind] = {
    "old_string": TextKind.BODY,
    "new_string": TextKind.BODY,
    "oldString": TextKind.BODY,
    "newString": TextKind.BODY,
    "new_source": TextKind.BODY,
    "prompt": TextKind.PROMPT,
    "compact_summary": TextKind.SUMMARY,
    "summary": TextKind.SUMMARY,
    "custom_instructions": TextKind.SUMMARY,
    "message": TextKind.NOTIFICATION,
    "last_assistant_message": TextKind.TOOL_IO,
}
# fullmatch, never ^...$: "$" also matches before a trailing newline
_AGENT_RE = re.compile(r"[A-Za-z0-9._-]{1,32}")
_KEY_RE = re.compile(r"[\x21-\x7e]{1,128}")
_SESSION_KEYS = ("session_id", "sessionId", "sessionID", "conversation_id", "conversationId")


@dataclass(frozen=True)
class Observation:
    """A stored hook event. Text fields are Sanitized by construction."""

    id: str
    session_id: str
    agent: str
    event: EventKind
    source_event: str
    project: str | None
    cwd: str | None
    host: str | None
    tool_name: str | None
    prompt_id: str | None
    occurred_at: str
    received_at: str
    title: Sanitized
    body: Sanitized
    payload: SanitizedJson
    idempotency_key: str | None
    owner: str = "local"  # the user whose token delivered the event (team mode)
    searchable: bool = True  # False: stored for the record, never indexed (ai-memory's own tool calls)

    def to_record(self) -> dict[str, Any]:
        """The JSON-able form used by the raw journal and by reindex."""
        return {
            "id": self.id, "session_id": self.session_id, "agent": self.agent,
            "event": self.event.value, "source_event": self.source_event,
            "project": self.project, "cwd": self.cwd, "host": self.host,
            "tool_name": self.tool_name, "prompt_id": self.prompt_id,
            "occurred_at": self.occurred_at, "received_at": self.received_at,
            "title": self.title.text, "body": self.body.text, "payload": self.payload.value,
            "redactions": sorted(set(self.payload.redactions) | set(self.body.redactions)),
            "idempotency_key": self.idempotency_key, "owner": self.owner,
            **({} if self.searchable else {"searchable": False}),
        }


def parse_timestamp(value: Any) -> str:
    """Accept ISO-8601 (naive means UTC) or epoch seconds/milliseconds; InputError otherwise."""
    if isinstance(value, bool):
        raise InputError("invalid timestamp", detail="expected ISO-8601 text or epoch seconds")
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return utc_iso(datetime.fromtimestamp(seconds, tz=timezone.utc))
        except (OverflowError, OSError, ValueError) as exc:
            raise InputError("invalid timestamp", detail=str(exc)) from exc
    if not isinstance(value, str):
        raise InputError("invalid timestamp", detail="expected ISO-8601 text")
    try:
        return utc_iso(parse_utc(value))
    except ValueError as exc:
        raise InputError("invalid timestamp", detail=f"{value[:64]!r} is not ISO-8601") from exc


# How far a hook client's capture time may lie from the daemon's clock and still be believed:
# a spooled event can wait days for delivery, but a clock minutes in the future is wrong.
_CAPTURE_PAST = timedelta(days=30)
_CAPTURE_FUTURE = timedelta(minutes=5)


def _capture_time(captured_at: Any, received_at: datetime) -> str:
    """When the client captured the event (its spool envelope says), else when we received it.

    A spooled event delivered late keeps its real time and its place among the session's events.
    """
    if captured_at is None:
        return utc_iso(received_at)
    try:
        moment = parse_utc(parse_timestamp(captured_at))
    except InputError:
        return utc_iso(received_at)
    if not received_at - _CAPTURE_PAST <= moment <= received_at + _CAPTURE_FUTURE:
        return utc_iso(received_at)
    return utc_iso(moment)


def _first_str(payload: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return None


SESSION_ID_CHARS = 200


def session_id_of(payload: dict[str, Any]) -> str | None:
    """The session a hook payload names, as it is stored (clipped and sanitized): every reader of
    a payload's session compares with this value. None when it names none."""
    named = _first_str(payload, _SESSION_KEYS)
    if named is None:
        return None
    return sanitize(named[:SESSION_ID_CHARS], TextKind.TITLE).text[:SESSION_ID_CHARS] or None


def cwd_of(payload: dict[str, Any]) -> str | None:
    """The working directory a hook payload names, as sent (a project is derived from it)."""
    return _first_str(payload, CWD_KEYS)


def build_observation(
    payload: Any,
    *,
    agent: str,
    event_hint: str | None,
    received_at: datetime,
    idempotency_key: str | None = None,
    host: str | None = None,
    project_resolver: Callable[[str], str] | None = None,
    captured_at: Any = None,
    owner: str = "local",
) -> Observation:
    """Validate, normalize and sanitize one raw hook payload. InputError says what is wrong."""
    if not isinstance(payload, dict):
        raise InputError("payload must be a JSON object", detail=f"got {type(payload).__name__}")
    if not _AGENT_RE.fullmatch(agent):
        raise InputError("invalid agent name", detail="1-32 characters of A-Z a-z 0-9 . _ -")
    if event_hint is not None and not isinstance(event_hint, str):
        raise InputError("invalid event", detail="the event name is a string")
    if (cursor_key := cursor_event_key(agent, payload, owner)) is not None:
        idempotency_key = cursor_key
    payload = in_common_terms(agent, payload)
    agent = speaking_agent(agent, payload)
    source_event = _first_str(payload, ("hook_event_name", "hookEventName", "event")) or event_hint
    if not source_event:
        raise InputError("missing event", detail="send hook_event_name in the body or ?event=")
    session_id = session_id_of(payload)
    if session_id is None:
        raise InputError("missing session_id", detail="every hook payload needs a session_id")
    key = idempotency_key or _first_str(payload, ("idempotency_key",))
    if key is not None and (not isinstance(key, str) or not _KEY_RE.fullmatch(key)):
        raise InputError("invalid idempotency key", detail="1-128 printable ASCII characters")
    stamp = payload.get("timestamp")
    occurred_at = parse_timestamp(stamp) if stamp is not None else _capture_time(captured_at, received_at)
    kind = meant_kind(normalize_event(source_event), payload)
    payload, searchable = as_meant(kind, payload)
    clean = sanitize_json(payload, field_caps=FIELD_CAPS)
    value = clean.value if isinstance(clean.value, dict) else {}
    title_text, body_text = describe(kind, value)
    cwd = _clean_path(value, CWD_KEYS)
    project = project_name(_clean_short(value.get("project")))  # as the wiki will name it
    if project is None and cwd and project_resolver is not None:
        project = project_resolver(cwd)
    return Observation(
        id=new_id(),
        session_id=session_id,
        agent=agent,
        event=kind,
        source_event=source_event[:128],
        project=project,
        cwd=cwd,
        host=_clean_short(host or value.get("host") or value.get("hostname")),
        tool_name=_clean_short(value.get("tool_name") or value.get("toolName")),
        prompt_id=_clean_short(value.get("prompt_id")),
        occurred_at=occurred_at,
        received_at=utc_iso(received_at),
        title=sanitize(title_text, TextKind.TITLE),
        body=sanitize(body_text, TextKind.BODY),
        payload=clean,
        idempotency_key=key,
        owner=owner,
        searchable=searchable,
    )


def _clean_short(value: Any) -> str | None:
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        return str(value).strip()[:200]
    return None


def _clean_path(payload: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    found = _first_str(payload, keys)
    if found is None:
        roots = payload.get("workspace_roots") or payload.get("workspacePaths")
        if isinstance(roots, list) and roots and isinstance(roots[0], str):
            found = roots[0]
    return found[:4096] if found else None


def _excerpt(value: Any, limit: int = 2048) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return cap(text, limit)[0]


def describe(kind: EventKind, p: dict[str, Any]) -> tuple[str, str]:
    """A one-line title and a searchable body for an already-sanitized payload."""
    tool = str(p.get("tool_name") or p.get("toolName") or "")
    tool_input = p.get("tool_input") if "tool_input" in p else p.get("toolInput")
    if kind is EventKind.USER_PROMPT:
        prompt = _prompt_text(p)
        return (prompt.strip().splitlines() or ["(empty prompt)"])[0], prompt
    if kind in (EventKind.PRE_TOOL_USE, EventKind.POST_TOOL_USE, EventKind.TOOL_FAILURE) and p.get("ai_memory_tool"):
        return f"used memory: {p['ai_memory_tool']}", ""
    if kind in (EventKind.PRE_TOOL_USE, EventKind.POST_TOOL_USE, EventKind.TOOL_FAILURE):
        subject = _tool_subject(tool_input)
        title = f"{tool}: {subject}" if subject else (tool or kind.value)
        result = p.get("tool_response", p.get("tool_output", p.get("result")))
        return title, tool_body(tool, tool_input, result, p.get("error"), kind is EventKind.TOOL_FAILURE)
    if kind in (EventKind.PRE_COMPACT, EventKind.POST_COMPACT):
        text = str(p.get("compact_summary") or p.get("summary") or p.get("custom_instructions") or "")
        return f"{kind.value}: {p.get('trigger', '')}".strip(": "), text
    if kind is EventKind.NOTIFICATION:
        text = str(p.get("message") or p.get("text") or "")
        return text or "notification", text
    if kind in (EventKind.STOP, EventKind.SUBAGENT_STOP):
        text = str(p.get("last_assistant_message") or p.get("prompt_response") or "")  # Gemini: prompt_response
        return (text.strip().splitlines() or [kind.value])[0], text
    if kind is EventKind.SESSION_START:
        return f"session start ({p.get('source', 'startup')})", _excerpt({k: p.get(k) for k in ("source", "model") if k in p})
    if kind is EventKind.SESSION_END:  # with the reply where the agent ends a run with it (Cline)
        return f"session end ({p.get('reason', 'other')})", str(p.get("last_assistant_message") or "")
    return kind.value if kind is not EventKind.OTHER else str(p.get("hook_event_name", "other")), _excerpt(p)


def _prompt_text(p: dict[str, Any]) -> str:
    value = p.get("prompt", p.get("message", p.get("text", "")))
    if isinstance(value, list):  # content blocks
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in value)
    return str(value)


def _tool_subject(tool_input: Any) -> str:
    if not isinstance(tool_input, dict):
        return ""
    for key in ("command", "commands", "file_path", "filePath", "path", "pattern", "url", "query", "description"):
        value = tool_input.get(key)
        if isinstance(value, list) and value and isinstance(value[0], str):  # Cline's run_commands
            value = value[0]
        if isinstance(value, str) and value.strip():
            return value.strip().splitlines()[0]
    return ""
