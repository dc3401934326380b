"""Storing structured memories: idempotent, guarded against duplicates, corrected by superseding.

A write is checked and written under one lock, so two identical writes racing each other
cannot both pass the duplicate guard (the daemon is the only writer of the wiki).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ai_memory.core.chunks import chunk_text, text_hash
from ai_memory.core.clock import utc_iso
from ai_memory.core.errors import AuthError, Conflict, NotFound
from ai_memory.core.ids import new_id
from ai_memory.core.memory import (
    MemoryDraft, correction_hides, mark_superseded, memory_page, normalized_hash, page_path,
)
from ai_memory.core.page import is_ours, render_page, split_frontmatter, with_line_added, without_line
from ai_memory.core.users import ADMIN, visible_to
from ai_memory.embed.model import Embedder
from ai_memory.store.embeddings import insert_embeddings
from ai_memory.store.memories import by_idempotency_key, find_page, live_first_chunks, same_text
from ai_memory.store.reader import Reader
from ai_memory.store.writer import WriteTx
from ai_memory.wiki.service import Wiki

NEAR_DUPLICATE = 0.95
EMBED_MISSING_LIMIT = 16  # pages not embedded yet that a write embeds on the spot to compare


@dataclass(frozen=True)
class Stored:
    id: str
    path: str
    created: bool  # False when an idempotency key matched an earlier write
    supersedes: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "path": self.path, "created": self.created, "supersedes": self.supersedes}


class Memories:
    """Owns deliberate writes to the wiki: POST /v1/pages and, later, the MCP and CLI verbs."""

    def __init__(self, wiki: Wiki, reader: Reader, embedder: Callable[[], Embedder | None]) -> None:
        self._wiki = wiki
        self._reader = reader
        self._embedder = embedder
        self._lock = asyncio.Lock()

    async def remember(self, draft: MemoryDraft, now: datetime | None = None) -> Stored:
        moment = now or datetime.now(timezone.utc)
        async with self._lock:
            # an old name (a client's, or a proposal read before a rename) files under the new one
            draft = dataclasses.replace(draft, project=self._wiki.project_now(draft.project) or draft.project)
            if (key := draft.idempotency_key):
                earlier = await self._reader.run(lambda c: by_idempotency_key(c, key, draft.owner))
                if earlier is not None:
                    return Stored(earlier["uid"] or earlier["path"], earlier["path"], False, earlier["supersedes"])
            old = await self._superseded_page(draft)
            vector = await self._check_duplicates(draft, moment, old)
            return await self._write(draft, moment, old, vector)

    async def _superseded_page(self, draft: MemoryDraft) -> dict[str, Any] | None:
        if not (ref := draft.supersedes):
            return None
        old = await self._reader.run(lambda c: find_page(c, ref))
        if old is not None and not visible_to(draft.owner, old["scope"], old["owner"]):
            old = None  # another user's private page: it does not exist for this writer
        if old is None:
            raise NotFound("nothing to supersede", detail=f"no page with id or path {draft.supersedes!r}")
        if old["superseded_by"]:
            raise Conflict("already superseded", detail=f"correct the newest version, {old['superseded_by']}",
                           id=old["superseded_by"])
        author = old["owner"] or ADMIN  # a person's note (no owner) is the vault owner's: the admin
        hides = correction_hides(old["scope"], old["owner"], draft.scope, draft.owner)
        if hides and draft.owner not in (author, ADMIN):  # a private correction is its author's own note
            raise AuthError("only the page's author or the admin can correct it",
                            detail=f"{old['path']} is {author}'s; write a memory of your own, or ask them")
        return old

    async def _check_duplicates(self, draft: MemoryDraft, moment: datetime,
                                old: dict[str, Any] | None) -> np.ndarray | None:
        """Refuse a write equal (normalized) or nearly equal (cosine) to a live page of its kind."""
        stamp = utc_iso(moment)
        skip = old["path"] if old else None
        twin = await self._reader.run(
            lambda c: same_text(c, draft.home, draft.page_type, normalized_hash(_body(draft)), stamp, draft.owner))
        if twin is not None and twin["path"] != skip:
            _refuse(twin["uid"], twin["path"], "the same text")
        embedder = self._embedder()
        if embedder is None:
            return None
        candidates = await self._reader.run(
            lambda c: live_first_chunks(c, draft.home, draft.page_type, embedder.model_id, stamp, draft.owner))
        candidates = [c for c in candidates if c["path"] != skip]
        missing = [c for c in candidates if c["vector"] is None][:EMBED_MISSING_LIMIT]
        texts = [_first_chunk(draft)] + [c["text"] for c in missing]
        vectors = await asyncio.to_thread(embedder.encode, texts)
        for cand, vec in zip(missing, vectors[1:]):
            cand["vector"] = vec
        for cand in candidates:
            if cand["vector"] is not None and float(np.dot(vectors[0], cand["vector"])) >= NEAR_DUPLICATE:
                _refuse(cand["uid"], cand["path"], f"nearly the same text (cosine ≥ {NEAR_DUPLICATE})")
        own: np.ndarray = vectors[0]
        return own

    async def _write(self, draft: MemoryDraft, moment: datetime, old: dict[str, Any] | None,
                     vector: np.ndarray | None) -> Stored:
        uid = new_id()
        old_ref = (old["uid"] or old["path"]) if old else None
        meta, body = memory_page(draft, uid, moment, supersedes_uid=old_ref)
        rel = page_path(draft, uid)
        pages = [(rel, render_page(meta, body))]  # the new page first: a crash then leaves no gap
        if old is not None and correction_hides(old["scope"], old["owner"], draft.scope, draft.owner):
            marked = await self._marked_superseded(old["path"], uid, draft.supersede_reason, moment)
            if marked is not None:
                pages.append((old["path"], marked))
        embedder = self._embedder()
        reason = f"memory: {draft.kind} {rel}" + (f" supersedes {old['path']}" if old else "")
        await self._wiki.write_pages(pages, reason, extra=_store_vector(draft, vector, embedder), commit_now=True)
        return Stored(uid, rel, True, old_ref)

    async def _marked_superseded(self, rel: str, uid: str, reason: str | None, moment: datetime) -> str | None:
        """The old page pointing at its correction: a page ai-memory wrote is rendered anew; a
        person's note gets one line, ``superseded_by``, and not one other byte changed (None:
        it has no frontmatter to add it to, and the correction's ``supersedes`` says it alone)."""
        text, meta, body = await self._read_page(rel)
        if is_ours(meta):
            return render_page(mark_superseded(meta, uid, reason, moment), body)
        return with_line_added(text, "superseded_by", uid)

    async def set_pinned(self, ref: str, pinned: bool, owner: str) -> dict[str, Any]:
        """Pin or unpin the page ``owner`` may see by ``ref``: its frontmatter's ``pinned``,
        written and committed as any edit (a page already so is left alone). A person's note
        gains or loses exactly the line ``pinned: true``, nothing else; where that cannot be done
        exactly, the pin is refused with the reason."""
        async with self._lock:
            found = await self._reader.run(lambda c: find_page(c, ref))
            if found is None or not visible_to(owner, found["scope"], found["owner"]):
                raise NotFound("no such page", detail=ref[:200])
            text, meta, body = await self._read_page(found["path"], "to pin")
            changed = bool(meta.get("pinned")) != pinned
            if changed:
                verb = "pin" if pinned else "unpin"
                await self._wiki.write_pages([(found["path"], _pinned(found["path"], text, meta, body, pinned))],
                                             f"{verb} {found['path']} by {owner}", commit_now=True)
        return {"path": found["path"], "id": found["uid"], "pinned": pinned, "changed": changed}

    async def _read_page(self, rel: str, purpose: str = "to supersede") -> tuple[str, dict[str, Any], str]:
        """The file as it is now (files win over the index): its text, frontmatter and body."""
        try:
            text = (await asyncio.to_thread(self._wiki.read, rel)).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise NotFound(f"the page {purpose} cannot be read", detail=f"{rel}: {exc}") from exc
        meta, body, problems = split_frontmatter(text)
        if problems:
            raise Conflict(f"the page {purpose} has broken frontmatter", detail=f"{rel}: {problems[0]}")
        return text, meta, body


def _pinned(rel: str, text: str, meta: dict[str, Any], body: str, pinned: bool) -> str:
    """The page's text pinned or unpinned: ours rendered anew, a person's note changed by the one
    line ``pinned: true`` (Conflict where that line cannot be added or removed exactly)."""
    if is_ours(meta):
        marked = {**meta, "pinned": True} if pinned else {k: v for k, v in meta.items() if k != "pinned"}
        return render_page(marked, body)
    changed = with_line_added(text, "pinned", True) if pinned else without_line(text, "pinned", True)
    if changed is None:
        where = "add a frontmatter line `pinned: true` to it" if pinned else "remove its `pinned` line"
        raise Conflict("ai-memory did not write this page and changes it only by its own line",
                       detail=f"{rel}: {where} yourself")
    return changed


def _body(draft: MemoryDraft) -> str:
    return f"\n{draft.text}\n"


def _first_chunk(draft: MemoryDraft) -> str:
    return chunk_text(draft.title, _body(draft))[0]


def _store_vector(draft: MemoryDraft, vector: np.ndarray | None,
                  embedder: Embedder | None) -> Callable[[WriteTx, int], None] | None:
    """Keep the vector computed for the guard: the new page is vector-searchable at once."""
    if vector is None or embedder is None:
        return None

    def rows(tx: WriteTx, _page_id: int) -> None:
        insert_embeddings(tx.conn, embedder.model_id, int(vector.shape[0]),
                          [(text_hash(_first_chunk(draft)), vector.astype(np.float32).tobytes())])

    return rows


def _refuse(uid: str | None, path: str, why: str) -> None:
    raise Conflict("duplicate memory", detail=f"{path} already holds {why}", id=uid, path=path)
