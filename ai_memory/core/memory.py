"""Structured memories: what an agent stores on purpose (a fact, a decision, a preference, ...).

This module turns a request into a page — validated, sanitized, with its path and frontmatter —
and marks an old page as superseded. It does no I/O; the coordination layer writes the files.
Records are immutable: a correction is a new page, and the old one only gains
``superseded_by`` and the reason.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ai_memory.core.clock import utc_iso
from ai_memory.core.errors import InputError
from ai_memory.core.observation import parse_timestamp
from ai_memory.core.page import GLOBAL_PROJECT, MEMORY_KINDS, SCOPES
from ai_memory.core.sanitizer import TextKind, sanitize

MAX_LIST = 32
KEY_CHARS = 80  # longer keys are stored as their hash (a title's cap would cut them)
_SLUG = re.compile(r"[^a-z0-9]+")
PROJECT_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"  # a project a memory may name (or "_global")
PROJECT_RULE = "letters, digits, '.', '_' and '-', up to 128 characters"
_PROJECT = re.compile(PROJECT_NAME)  # fullmatch: "$" would allow "acme\n"
_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class MemoryDraft:
    """A validated, sanitized request to store one memory."""

    text: str
    kind: str
    project: str
    scope: str
    owner: str
    title: str
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    source: str | None = None
    expires_at: str | None = None
    supersedes: str | None = None
    supersede_reason: str | None = None
    idempotency_key: str | None = None
    generated: dict[str, str] | None = None  # {by: <model>, at: <time>} for a page a model proposed

    @property
    def page_type(self) -> str:
        return MEMORY_KINDS[self.kind][0]

    @property
    def home(self) -> str:
        """The top-level folder: the project, or ``_global`` for global memories."""
        return GLOBAL_PROJECT if self.scope == GLOBAL_PROJECT else self.project


def _string(body: dict[str, Any], key: str, kind: TextKind = TextKind.TITLE) -> str | None:
    value = body.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f"{key} must be a string")
    return sanitize(value, kind).text.strip() or None


def _strings(body: dict[str, Any], key: str) -> tuple[str, ...]:
    value = body.get(key) or []
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and len(value) > MAX_LIST:  # before reading them: the count is the bound
        raise InputError(f"too many {key}", detail=f"at most {MAX_LIST}")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{key} must be a list of strings")
    cleaned = (sanitize(v, TextKind.TITLE).text.strip() for v in value)
    return tuple(dict.fromkeys(v for v in cleaned if v))


def check_project(project: object) -> str:
    if not isinstance(project, str) or not project.strip():
        raise InputError("missing project", detail="every memory belongs to a project (or \"_global\")")
    if project != GLOBAL_PROJECT and not _PROJECT.fullmatch(project):
        raise InputError("bad project name", detail=PROJECT_RULE)
    return project


def parse_draft(body: object, owner: str) -> MemoryDraft:
    """Validate a POST /v1/pages body; every problem is an InputError naming the field."""
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object", detail='{"text": "...", "kind": "fact", "project": "api"}')
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError("missing text", detail="text is what to remember")
    kind = body.get("kind")
    if not isinstance(kind, str) or kind not in MEMORY_KINDS:
        raise InputError(f"unknown kind {str(kind)[:40]!r}" if kind else "missing kind",
                         detail="one of " + ", ".join(MEMORY_KINDS))
    project = check_project(body.get("project"))
    scope = body.get("scope") or ("_global" if project == GLOBAL_PROJECT else "project")
    if not isinstance(scope, str) or scope not in SCOPES:
        raise InputError(f"unknown scope {str(scope)[:40]!r}", detail="one of " + ", ".join(SCOPES))
    clean = sanitize(text.strip(), TextKind.BODY).text
    expires = _string(body, "expires_at")
    return MemoryDraft(
        text=clean, kind=kind, project=project, scope=scope, owner=owner,
        title=_string(body, "title") or default_title(clean), tags=_strings(body, "tags"),
        entities=_strings(body, "entities"), source=_string(body, "source"),
        expires_at=_timestamp(expires) if expires else None, supersedes=_string(body, "supersedes"),
        supersede_reason=_string(body, "supersede_reason", TextKind.SUMMARY),
        idempotency_key=opaque_key(body.get("idempotency_key")),
    )


def opaque_key(value: object) -> str | None:
    """An idempotency key as stored: opaque, so never cut nor redacted (two keys that share their
    first 80 characters, or both look like a secret, must not become one). A short printable key
    the sanitizer leaves alone is kept as it is; any other is replaced by its SHA-256."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError("idempotency_key must be a string")
    if len(value) <= KEY_CHARS and value.isprintable() and sanitize(value, TextKind.TITLE).text == value:
        return value
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _timestamp(text: str) -> str:
    try:
        return parse_timestamp(text)
    except InputError as exc:
        raise InputError("expires_at must be an ISO date or timestamp", detail=text[:40]) from exc


def default_title(text: str) -> str:
    """The first sentence or line, clipped to 80 characters at a word boundary."""
    first = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0].strip()
    if len(first) <= 80:
        return first.rstrip(".")
    return first[:80].rsplit(" ", 1)[0] + " …"


def normalized_hash(text: str) -> str:
    """Hash of the text with case, accents, punctuation and spacing folded: the duplicate test."""
    if text.isascii():  # nothing to decompose, no accent to drop: the common case, at C speed
        words = _WORDS.findall(text.casefold())
    else:
        folded = unicodedata.normalize("NFKD", text).casefold()
        words = _WORDS.findall("".join(c for c in folded if not unicodedata.combining(c)))
    return hashlib.sha256(" ".join(words).encode()).hexdigest()


def slug(title: str) -> str:
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    return _SLUG.sub("-", ascii_title).strip("-")[:60].rstrip("-") or "memory"


def page_path(draft: MemoryDraft, uid: str) -> str:
    """``<home>/<family>/<slug>-<id tail>.md``: readable, and unique without a lookup."""
    family = MEMORY_KINDS[draft.kind][1]
    return f"{draft.home}/{family}/{slug(draft.title)}-{uid[-8:]}.md"


def memory_page(draft: MemoryDraft, uid: str, now: datetime, supersedes_uid: str | None = None
                ) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of the new page; the body is the text itself."""
    stamp = utc_iso(now)
    meta: dict[str, Any] = {
        "id": uid, "type": draft.page_type, "kind": draft.kind, "title": draft.title,
        "project": draft.home, "scope": draft.scope, "owner": draft.owner,
        "created": stamp, "updated": stamp,
    }
    if draft.scope == GLOBAL_PROJECT and draft.project != GLOBAL_PROJECT:
        meta["origin_project"] = draft.project
    optional = {
        "tags": list(draft.tags), "entities": list(draft.entities), "source": draft.source,
        "expires_at": draft.expires_at, "supersedes": supersedes_uid,
        "supersede_reason": draft.supersede_reason if supersedes_uid else None,
        "idempotency_key": draft.idempotency_key, "generated": dict(draft.generated or {}),
    }
    meta.update({k: v for k, v in optional.items() if v})
    return meta, f"\n{draft.text}\n"


def correction_hides(old_scope: str | None, old_owner: str | None, new_scope: str | None,
                     new_owner: str | None) -> bool:
    """Whether a correction supersedes the page it names for everyone who can see that page.

    A correction is visible to exactly the readers of the new page, so a private one supersedes
    only its author's own private page; a page others can read is never hidden nor annotated
    by a correction they cannot see (it stays the author's own note, naming what it corrects).
    """
    if new_scope != "private":
        return True
    return old_scope == "private" and old_owner is not None and old_owner == new_owner


def mark_superseded(meta: dict[str, Any], by_uid: str, reason: str | None, now: datetime) -> dict[str, Any]:
    """The old page's frontmatter, now pointing at its correction (its text stays as it was)."""
    marked = dict(meta)
    marked["superseded_by"] = by_uid
    marked["superseded_at"] = utc_iso(now)
    if reason:
        marked["supersede_reason"] = reason
    return marked
