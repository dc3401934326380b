"""One page with its links and backlinks, resolved as the graph stream resolves them, as a caller
may see it (``wiki.page_access.visible_page``): a link or backlink to another user's private
page is left out. The web view's page reads this."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.errors import NotFound
from ai_memory.retrieval.streams import page_links
from ai_memory.store.reader import Reader
from ai_memory.wiki.page_access import visible_page

Links = dict[str, list[dict[str, Any]]]


async def read_linked_page(reader: Reader, ref: str, owner: str) -> tuple[dict[str, Any], list[dict[str, Any]], Links]:
    """(the page's index row, its lineage, {links, backlinks}); NotFound when there is no such
    page for ``owner``."""

    def read(conn: sqlite3.Connection) -> tuple[dict[str, Any] | None, list[dict[str, Any]], Links]:
        found, chain, hidden = visible_page(conn, ref, owner)
        if found is None:
            return None, [], {}
        links = page_links(conn, found["id"])
        links["backlinks"] = [b for b in links["backlinks"] if b["path"] not in hidden]
        for link in links["links"]:
            link["paths"] = [p for p in link["paths"] if p not in hidden]
        return found, chain, links

    found, chain, links = await reader.run(read)
    if found is None:
        raise NotFound("no such page", detail=ref)
    return found, chain, links
