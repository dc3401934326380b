"""Reading, rating and deleting one page by its path or memory id, as a caller may: another user's
private page does not exist for them (``core.users.visible_to``). The HTTP routes, the MCP
tools and the web view call these."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import NotFound
from ai_memory.core.users import visible_to
from ai_memory.store.forgetting import give_feedback
from ai_memory.store.history import page_versions
from ai_memory.store.memories import find_page, lineage
from ai_memory.store.pages import get_page
from ai_memory.store.reader import Reader
from ai_memory.store.users import hidden_page_paths
from ai_memory.wiki.files import is_page_path
from ai_memory.wiki.service import Wiki


def visible_page(conn: sqlite3.Connection, ref: str, owner: str) -> tuple[dict | None, list[dict], set[str]]:
    """(the page by path or id, its lineage, the paths hidden from ``owner``): another user's
    private page does not exist for this caller, nor does a link to it in the lineage."""
    found = get_page(conn, ref)
    if found is None:
        match = find_page(conn, ref)
        found = get_page(conn, match["path"]) if match else None
    hidden = hidden_page_paths(conn, owner)
    if found is None or found["path"] in hidden:
        return None, [], hidden
    return found, [link for link in lineage(conn, found["path"]) if link["path"] not in hidden], hidden


def visible_history(conn: sqlite3.Connection, ref: str, owner: str, limit: int) -> tuple[dict | None, list[dict]]:
    """The page and its indexed versions (``page_history`` rows), those ``owner`` may see (a
    version that was another user's private page is left out)."""
    page, _, _ = visible_page(conn, ref, owner)
    if page is None:
        return None, []
    versions = [v for v in page_versions(conn, page["path"], limit)
                if visible_to(owner, v["scope"], v["owner"])]
    return page, versions


async def read_page(reader: Reader, ref: str, owner: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the page's index row, its lineage of corrections that ``owner`` may see); NotFound when
    there is no such page for ``owner``."""
    page, chain, _ = await reader.run(lambda c: visible_page(c, ref, owner))
    if page is None:
        raise NotFound("no such page", detail=ref)
    return page, chain


async def read_history(reader: Reader, ref: str, owner: str, limit: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the page, its indexed versions ``owner`` may see, newest first); NotFound when there is
    no such page for ``owner``."""
    page, versions = await reader.run(lambda c: visible_history(c, ref, owner, limit))
    if page is None:
        raise NotFound("no such page", detail=ref)
    return page, versions


async def delete_page(wiki: Wiki, ref: str, who: str) -> dict[str, Any]:
    """Remove the page ``ref`` names (git history keeps it); its index row as it was. NotFound
    when ``who`` may not see it, when it is no page file, or when the file is already gone."""
    found = await wiki.reader.run(lambda c: find_page(c, ref))
    if found is None or not visible_to(who, found["scope"], found["owner"]) or not is_page_path(found["path"]):
        raise NotFound("no such page", detail=ref)
    if not await wiki.delete_page(found["path"], f"delete {found['path']} by {who}"):
        raise NotFound("the page file is already gone", detail=found["path"])
    return found


async def feedback_on(wiki: Wiki, ref: str, signal: str, who: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the page's row, its new salience) after ``who`` rated it; NotFound when they may not see it."""
    found = await wiki.reader.run(lambda c: find_page(c, ref))
    if found is None or not visible_to(who, found["scope"], found["owner"]):
        raise NotFound("no such page", detail=ref[:200])
    return found, await wiki.writer.submit(give_feedback(found["path"], signal, now_iso()))
