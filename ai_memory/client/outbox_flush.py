"""Sending the outbox to the server, oldest first, so that retries never duplicate.

Each entry goes out with ``Idempotency-Key`` (and, for memories, ``idempotency_key`` in the body)
set to its key, so a request whose answer was lost and is sent again returns the first write.
The daemon deduplicates memories, handoffs and messages by that key (per owner).

A correction whose ``supersedes`` names a local id is remapped to the server id that entry
adopted; that is why the order matters and why the flush stops at the first entry that could
not be sent (the server went away again): a later correction must not overtake its original.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ai_memory.client.http import Reply
from ai_memory.client.outbox import KINDS, Entry, Outbox, is_local_id
from ai_memory.core.errors import DaemonUnavailable

_STOP_STATUSES = {401, 403, 408, 429}  # not the entry's fault: keep it pending and stop


class Transport(Protocol):
    def request(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Reply: ...


@dataclass
class FlushReport:
    sent: list[dict[str, Any]] = field(default_factory=list)
    stopped: str | None = None  # why the flush stopped early (the server went away, auth, busy)
    skipped: bool = False  # another process is flushing

    def as_json(self) -> dict[str, Any]:
        return {"sent": self.sent, "stopped": self.stopped, "skipped": self.skipped}


def flush(outbox: Outbox, client: Transport) -> FlushReport:
    """Send every pending entry in order; stop at the first that cannot be sent now."""
    report = FlushReport()
    with outbox.flushing() as mine:
        if not mine:
            report.skipped = True
            return report
        for entry in outbox.entries("pending"):
            try:
                outcome = _send(outbox, client, entry)
            except DaemonUnavailable as exc:
                report.stopped = exc.message
                break
            if outcome is None:
                report.stopped = "the server is not ready (see ai-memory outbox)"
                break
            report.sent.append(outcome)
    return report


def _send(outbox: Outbox, client: Transport, entry: Entry) -> dict[str, Any] | None:
    """One entry: its new state as JSON, or None to stop the flush here."""
    body = dict(entry.body)
    if entry.kind == "memory" and is_local_id(body.get("supersedes")):
        target = outbox.get(body["supersedes"])
        if target is None or target.state == "failed":
            why = f"it corrects {body['supersedes']}, which " + ("failed" if target else "is unknown")
            return _settle(outbox, entry, "failed", reason=why)
        if target.state == "pending":
            return None  # cannot happen in order; kept as a guard against a reordered file
        body["supersedes"] = target.server_id
    outbox.count_attempt(entry.local_id)
    key = str(body.get("idempotency_key") or entry.local_id)
    reply = client.request("POST", KINDS[entry.kind], body, {"Idempotency-Key": key})
    return _outcome(outbox, entry, reply, body)


def _outcome(outbox: Outbox, entry: Entry, reply: Reply, body: dict[str, Any]) -> dict[str, Any] | None:
    data = reply.body if isinstance(reply.body, dict) else {}
    if reply.ok:
        record = data[entry.kind] if entry.kind in data else data  # handoff/message are wrapped
        return _settle(outbox, entry, "synced", server_id=str(record.get("id")), server_path=record.get("path"),
                       body=body)
    if reply.status in _STOP_STATUSES or reply.status >= 500:
        outbox.count_attempt(entry.local_id, reason=f"{reply.status}: {data.get('error') or reply.body}")
        return None
    reason = str(data.get("error") or f"the server answered {reply.status}")
    if data.get("detail"):
        reason += f" ({data['detail']})"
    if reply.status == 409 and data.get("id"):
        return _settle(outbox, entry, "duplicate", server_id=str(data["id"]), server_path=data.get("path"),
                       reason=reason, body=body)
    return _settle(outbox, entry, "failed", reason=f"{reply.status}: {reason}", body=body)


def _settle(outbox: Outbox, entry: Entry, state: str, *, server_id: str | None = None,
            server_path: str | None = None, reason: str | None = None,
            body: dict[str, Any] | None = None) -> dict[str, Any]:
    outbox.mark(entry.local_id, state, server_id=server_id, server_path=server_path, reason=reason, body=body)
    return {"local_id": entry.local_id, "kind": entry.kind, "state": state, "id": server_id or entry.local_id,
            "path": server_path, "reason": reason}
