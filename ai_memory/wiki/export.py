"""Every page and tombstone, a batch at a time, for clients that mirror the wiki without git.

Order: pages by path, then tombstones by path. The cursor is opaque to clients (base64 of the
section and the last path); ``next_cursor`` is None after the last batch. A page's ``content``
is its file's text as it is now, with the SHA-256 of those bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
from pathlib import Path
from typing import Any

from ai_memory.core.errors import InputError
from ai_memory.core.page import content_hash
from ai_memory.store.export import page_rows, tombstone_rows
from ai_memory.store.reader import Reader
from ai_memory.wiki.files import read_file

PAGE, TOMBSTONE = "page", "tombstone"
Cursor = tuple[str, str]  # (section, last path)


def encode_cursor(cursor: Cursor) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(cursor)).encode()).decode().rstrip("=")


def decode_cursor(text: str) -> Cursor:
    try:
        section, path = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, TypeError, binascii.Error):
        raise InputError("bad cursor", detail="pass next_cursor from the previous answer, unchanged") from None
    if section not in (PAGE, TOMBSTONE) or not isinstance(path, str):
        raise InputError("bad cursor", detail="pass next_cursor from the previous answer, unchanged")
    return section, path


async def export(reader: Reader, wiki_dir: Path, cursor: Cursor | None, limit: int, owner: str) -> dict[str, Any]:
    """The batch after ``cursor`` of what ``owner`` may read (``export_batch``), on a reader thread."""
    return await reader.run(lambda c: export_batch(c, wiki_dir, cursor, limit, owner))


def export_batch(conn: sqlite3.Connection, wiki_dir: Path, cursor: Cursor | None, limit: int,
                 owner: str) -> dict[str, Any]:
    """Up to ``limit`` entries after ``cursor``, and the cursor of the next batch."""
    section, after = cursor or (PAGE, "")
    rows: list[tuple[str, sqlite3.Row]] = []
    if section == PAGE:
        rows += [(PAGE, r) for r in page_rows(conn, after, limit + 1, owner)]
        after = ""
    if len(rows) <= limit:
        rows += [(TOMBSTONE, r) for r in tombstone_rows(conn, after, limit + 1 - len(rows), owner)]
    more = len(rows) > limit
    rows = rows[:limit]
    items = [item for item in (_entry(kind, row, wiki_dir) for kind, row in rows) if item is not None]
    next_cursor = encode_cursor((rows[-1][0], rows[-1][1]["path"])) if more else None
    return {"items": items, "next_cursor": next_cursor}


def _entry(kind: str, row: sqlite3.Row, wiki_dir: Path) -> dict[str, Any] | None:
    common = {"kind": kind, "path": row["path"], "id": row["uid"], "type": row["type"],
              "title": row["title"], "project": row["project"]}
    if kind == TOMBSTONE:
        return {**common, "deleted_at": row["removed_at"], "reason": row["reason"],
                "git_commit": row["git_commit"], "content_hash": row["content_hash"]}
    try:
        data = read_file(wiki_dir, row["path"])[0]  # never through a symlink
    except OSError:  # removed since it was indexed: its tombstone comes in a later export
        return None
    return {**common, "updated": row["updated"], "content": data.decode("utf-8", "replace"),
            "content_hash": content_hash(data)}
