"""What the index says of itself for ``status``: counts, agents, broken pages, blocked indexes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ai_memory.store.observations import agents_last_seen, counts
from ai_memory.store.pages import broken_pages, page_count
from ai_memory.store.projects import folder_mismatches, under_old_names
from ai_memory.store.reader import Reader
from ai_memory.wiki.project_index import blocked_indexes


async def index_status(reader: Reader, wiki_dir: Path) -> dict[str, Any]:
    """{counts (sessions, observations, pages), agents (last event of each), broken_pages,
    blocked_indexes, pages_under_old_names, folder_mismatches}, read in one snapshot."""

    def read(conn: sqlite3.Connection) -> dict[str, Any]:
        return {"counts": {**counts(conn), "pages": page_count(conn)}, "agents": agents_last_seen(conn),
                "broken_pages": broken_pages(conn), "blocked_indexes": blocked_indexes(conn, wiki_dir),
                "pages_under_old_names": under_old_names(conn), "folder_mismatches": folder_mismatches(conn)}

    return await reader.run(read)
