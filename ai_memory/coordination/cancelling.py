"""What a cancel of a handoff or a message answers, once its writer job has run."""

from __future__ import annotations

from typing import Any

from ai_memory.core.errors import AuthError, Conflict, NotFound


def cancelled(record: dict[str, Any] | None, *, kind: str, record_id: str, owner: str,
              only: str, whose: str) -> dict[str, Any]:
    """The record the job cancelled; NotFound when the caller cannot see it, AuthError when it
    is someone else's and still open (``only``: who may cancel it; ``whose``: how its owner is
    named), Conflict when it is no longer open."""
    if record is None:
        raise NotFound(f"no such {kind}", detail=record_id)
    if record["owner"] != owner and record["state"] == "open":
        raise AuthError(f"only {only} can cancel it", detail=f"{whose} {record['owner']}")
    if record["state"] != "cancelled":
        raise Conflict(f"{kind} is {record['state']}", detail=f"only an open {kind} can be cancelled",
                       record=record)
    return record
