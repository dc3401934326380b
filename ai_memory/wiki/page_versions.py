"""Page history as use cases: list a page's revisions, read it at one, restore one.

Who may see what lives here, once: a page is named by memory id or wiki path; another user's
private page does not exist for the caller, neither as it is now nor as any version of it
that was private to someone else. A restore goes through ``Wiki.write_pages`` like any page
write (the file, its index rows in one transaction, a commit at once).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ai_memory.core.errors import InputError, NotFound
from ai_memory.core.page import parse_page
from ai_memory.core.users import visible_to
from ai_memory.store.memories import find_page
from ai_memory.wiki.page_history import (
    HISTORY_DEPTH, PageAt, Revision, check_page_path, page_at, page_log, restore_reason,
)
from ai_memory.wiki.service import Wiki


@dataclass(frozen=True)
class Restored:
    path: str
    restored_from: Revision
    changed: bool
    commit: str | None

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "restored_from": self.restored_from.as_json(), "changed": self.changed,
                "commit": self.commit}


class PageVersions:
    """A page's history for one caller (``owner``: whose private pages they may see), read
    from the newest ``depth`` commits (``wiki.history_depth``)."""

    def __init__(self, wiki: Wiki, depth: int = HISTORY_DEPTH) -> None:
        self.wiki = wiki
        self.depth = max(1, depth)

    async def resolve(self, ref: str, owner: str) -> str:
        """The wiki path ``ref`` names (a memory id, or a path, also of a page since removed)."""
        if not ref:
            raise InputError("missing path or id", detail="pass a wiki path or a memory id")
        found = await self.wiki.reader.run(lambda c: find_page(c, ref))
        if found is not None:
            if not visible_to(owner, found["scope"], found["owner"]):
                raise NotFound("no such page", detail=ref)
            return str(found["path"])
        if "/" not in ref and not ref.endswith(".md"):
            raise NotFound("no such page", detail=ref)
        return check_page_path(ref)

    async def log(self, ref: str, owner: str) -> tuple[str, list[Revision]]:
        """The revisions the caller may see: a version private to someone else is left out (a
        deleted private page's whole history with it: its commits, times and messages)."""
        path = await self.resolve(ref, owner)
        revisions = await asyncio.to_thread(page_log, self.wiki.dir, path, depth=self.depth,
                                            shown=lambda data: _visible(path, data, owner))
        if not revisions:
            raise NotFound("no such page",
                           detail=f"{path}: no version you may see in the last {self.depth} commits (wiki.history_depth)")
        return path, revisions

    async def at(self, ref: str, rev: str, owner: str) -> PageAt:
        path = await self.resolve(ref, owner)
        found = await asyncio.to_thread(page_at, self.wiki.dir, path, rev, self.depth)
        if not _visible(path, found.data, owner):
            raise NotFound("no such page", detail=path)  # private to someone else in that version
        return found

    async def restore(self, ref: str, rev: str, owner: str) -> Restored:
        """Write the page as ``rev`` left it, as a new commit (history is never rewritten)."""
        old = await self.at(ref, rev, owner)
        if parse_page(old.path, old.data).generated:
            raise InputError("that version is a generated file", detail=f"{old.path}: ai-memory rewrites it itself")
        try:
            text = old.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("that version is not UTF-8 text", detail=old.path) from exc
        try:
            current: bytes | None = await asyncio.to_thread(self.wiki.read, old.path)
        except FileNotFoundError:
            current = None
        if current == old.data:
            return Restored(old.path, old.revision, False, None)
        written = await self.wiki.write_pages([(old.path, text)], restore_reason(old.path, old.revision, owner),
                                              commit_now=True)
        path = written[0].path  # another than old.path when that project was renamed since
        latest = await asyncio.to_thread(page_log, self.wiki.dir, path, 1, self.depth)
        return Restored(path, old.revision, True, latest[0].commit if latest else None)


def _visible(path: str, data: bytes, owner: str) -> bool:
    """Whether ``owner`` may see this version of a page: not when it was private to another."""
    meta = parse_page(path, data).meta
    return visible_to(owner, _text(meta.get("scope")), _text(meta.get("owner")))


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def version_json(found: PageAt) -> dict[str, Any]:
    """A past version in the shape of a page read (``/v1/pages``), plus the revision."""
    page = parse_page(found.path, found.data)
    return {"path": found.path, "title": page.title, "type": page.type, "project": page.project,
            "uid": page.meta.get("id"), "body": page.body, "frontmatter": page.meta, "problems": page.problems,
            "lineage": [], "revision": found.revision.as_json()}
