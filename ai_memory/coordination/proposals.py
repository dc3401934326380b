"""What a consolidation job writes from a model's validated answer, through the usual doors.

Each proposed memory is a ``MemoryDraft`` built by ``parse_draft`` (the sanitizer, the
field checks) and stored by ``Memories.remember`` (the duplicate guard, the page-writing
path), with ``generated: {by, at}`` and its session as ``source``. Its idempotency key comes
from the job's saved answer, so applying the same answer twice stores each memory once. The
session page gains the model's summary, sanitized, only while it still holds the bytes the
rules compiled: a page a person edited is left as it is.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ai_memory.core.errors import Conflict, InputError
from ai_memory.core.memory import parse_draft
from ai_memory.core.page import render_page, split_frontmatter
from ai_memory.core.sanitizer import TextKind, sanitize
from ai_memory.core.users import ADMIN
from ai_memory.store.llm_jobs import LeasedJob, finish, note_written, sha256_text
from ai_memory.store.writer import WriteTx
from ai_memory.coordination.memories import Memories
from ai_memory.wiki.service import Wiki


@dataclass(frozen=True)
class Proposal:
    """A model's answer as validated, with who proposed it and when (saved on the job row)."""

    answer: dict[str, Any]
    model: str
    at: str  # UTC, "2026-12-01T14:00:00Z"

    def to_json(self) -> str:
        return json.dumps({"answer": self.answer, "model": self.model, "at": self.at}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Proposal":
        found = json.loads(text)
        return cls(found["answer"], found["model"], found["at"])

    @property
    def generated(self) -> dict[str, str]:
        return {"by": self.model, "at": self.at}

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()[:16]


def session_link(page_path: str) -> str:
    return f"[[{page_path.removesuffix('.md')}]]"


def rewritten_page(rule_text: str, proposal: Proposal) -> str:
    """The session page with the model's summary first and the rules' record kept below it."""
    meta, body, _problems = split_frontmatter(rule_text)
    meta = {**meta, "generated": proposal.generated}
    summary = sanitize(str(proposal.answer["summary"]).strip(), TextKind.BODY).text.strip()
    section = f"## Summary by {proposal.model}\n\n{summary}\n\n"
    lines = body.lstrip("\n").split("\n", 1)
    if lines[0].startswith("# "):
        rest = lines[1].lstrip("\n") if len(lines) > 1 else ""
        new_body = f"\n{lines[0]}\n\n{section}{rest}"
    else:
        new_body = f"\n{section}{body.lstrip(chr(10))}"
    return render_page(meta, new_body)


async def store_memories(memories: Memories, job: LeasedJob, project: str, proposal: Proposal) -> dict[str, int]:
    """Each proposed memory through the guard: counts of stored, already stored, duplicate, refused."""
    counts = {"stored": 0, "already_stored": 0, "duplicates": 0, "refused": 0}
    for i, item in enumerate(proposal.answer.get("memories", [])):
        body = {"text": item["text"], "kind": item["kind"], "title": item["title"], "tags": item.get("tags", []),
                "project": project, "source": session_link(job.page_path),
                "idempotency_key": f"llm:{job.session_id}:{proposal.digest}:{i}"}
        try:
            draft = dataclasses.replace(parse_draft(body, ADMIN), generated=proposal.generated)
            stored = await memories.remember(draft)
        except Conflict as exc:
            if exc.message != "duplicate memory":
                raise
            counts["duplicates"] += 1
            continue
        except InputError:
            counts["refused"] += 1
            continue
        counts["stored" if stored.created else "already_stored"] += 1
    return counts


async def rewrite_session_page(wiki: Wiki, job: LeasedJob, proposal: Proposal, outcome: dict[str, Any],
                               now: str) -> bool:
    """Rewrite the page and finish the job in the page's own transaction; False when the page
    is not the rules' any more (edited, or gone) and was left alone."""
    try:
        text = (await asyncio.to_thread(wiki.read, job.page_path)).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        outcome["page"] = "missing"
        return False
    current = sha256_text(text)
    if current == job.written_sha256:
        outcome["page"] = "rewritten"  # an earlier attempt's write landed before it could finish
        return False
    if current != job.page_sha256:
        outcome["page"] = "edited, left alone"
        return False
    new_text = rewritten_page(text, proposal)
    # before the file: a crash between the two then finds its own rewrite, not a person's edit
    if not await wiki.writer.submit_wait(lambda tx: note_written(tx.conn, job, new_text)):
        outcome["page"] = "compiled again meanwhile, left alone"  # the new job rewrites it
        return False
    outcome["page"] = "rewritten"

    def done(tx: WriteTx, _page_id: int) -> None:
        finish(tx.conn, job, outcome, now)

    await wiki.write_page(job.page_path, new_text, f"session summary by {proposal.model}: {job.page_path}",
                          extra=done)
    return True


def session_project(page_text: str) -> str:
    meta, _body, _problems = split_frontmatter(page_text)
    return str(meta.get("project") or "")
