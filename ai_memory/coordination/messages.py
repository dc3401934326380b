"""Messages between projects: an agent in one project leaves a note for the next agent in another."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from ai_memory.coordination.cancelling import cancelled
from ai_memory.core.clock import utc_iso
from ai_memory.core.errors import InputError
from ai_memory.core.memory import check_project
from ai_memory.core.sanitizer import TextKind, sanitize
from ai_memory.core.wire import DEFAULT_TTL_S, MAX_POP, MAX_TTL_S
from ai_memory.store.messages import cancel_message, claim_messages, insert_message, list_messages, pop_messages
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer

STATES = ("open", "popped", "expired", "cancelled")
MAX_LINE = 400


def parse_message(body: object, *, owner: str, now: datetime) -> dict[str, Any]:
    """Validate and sanitize POST /v1/messages: {to_project, body, from_project?, from_agent?, ttl_s?}."""
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object", detail='{"to_project": "web", "body": "..."}')
    text = body.get("body")
    if not isinstance(text, str) or not text.strip():
        raise InputError("missing body", detail="body is the message text")
    ttl = body.get("ttl_s", DEFAULT_TTL_S)
    if not isinstance(ttl, int) or isinstance(ttl, bool) or not 1 <= ttl <= MAX_TTL_S:
        raise InputError("ttl_s must be a whole number of seconds", detail=f"from 1 to {MAX_TTL_S}")
    message: dict[str, Any] = {
        "to_project": check_project(body.get("to_project")), "body": sanitize(text.strip(), TextKind.SUMMARY).text,
        "owner": owner, "created_at": utc_iso(now), "expires_at": utc_iso(now + timedelta(seconds=ttl)),
    }
    for key in ("from_project", "from_agent"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{key} must be a string")
        message[key] = sanitize(value, TextKind.TITLE).text if value else None
    return message


async def send(writer: Writer, message: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(message, created): False when its idempotency key was seen before."""
    return await writer.submit_wait(lambda tx: insert_message(tx.conn, message))


async def listing(reader: Reader, *, project: str | None, state: str | None,
                  now: datetime | None = None) -> list[dict[str, Any]]:
    """Messages to a project (or to all), oldest first, of one state or all; an open message past
    its time to live reads as expired."""
    if state is not None and state not in STATES:
        raise InputError(f"unknown state {state!r}", detail="one of " + ", ".join(STATES))
    stamp = utc_iso(now or datetime.now(timezone.utc))
    return await reader.run(lambda c: list_messages(c, project=project, state=state, now=stamp))


async def pop(writer: Writer, project: str, *, session_id: str | None = None, limit: int = 1,
              now: datetime | None = None) -> list[dict[str, Any]]:
    """Claim open messages for a project, oldest first; under any concurrency each goes to one caller."""
    stamp = utc_iso(now or datetime.now(timezone.utc))
    count = max(1, min(limit, MAX_POP))
    return await writer.submit_wait(lambda tx: pop_messages(tx.conn, project, session_id=session_id,
                                                            now=stamp, limit=count))


async def claim(writer: Writer, ids: list[str], *, session_id: str | None,
                now: datetime | None = None) -> list[dict[str, Any]]:
    """Claim exactly these messages (those still open); the briefing takes only what it can show."""
    stamp = utc_iso(now or datetime.now(timezone.utc))
    return await writer.submit_wait(lambda tx: claim_messages(tx.conn, ids, session_id=session_id, now=stamp))


async def cancel(writer: Writer, message_id: str, owner: str, now: datetime | None = None) -> dict[str, Any]:
    """Withdraw an open message; only its sender may."""
    stamp = utc_iso(now or datetime.now(timezone.utc))
    message = await writer.submit_wait(lambda tx: cancel_message(tx.conn, message_id, stamp, owner))
    return cancelled(message, kind="message", record_id=message_id, owner=owner,
                     only="the message's sender", whose="it was sent by")


def render_messages(messages: list[dict[str, Any]]) -> list[str]:
    """Markdown lines for the briefing."""
    lines = []
    for m in messages:
        origin = " / ".join(x for x in (m.get("from_project"), m.get("from_agent")) if x) or "another project"
        line = f"- From {origin} ({m['created_at'][:16].replace('T', ' ')}): {' '.join(m['body'].split())}"
        lines.append(line if len(line) <= MAX_LINE else line[: MAX_LINE - 2] + " …")
    return lines
