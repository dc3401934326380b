"""Reads behind structured memories: find a page by id or path, duplicates, lineage, vectors."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import numpy as np

from ai_memory.core.users import visible_sql

_FIELDS = "id, uid, path, project, type, title, scope, owner, superseded_by, supersedes, expires_at, created, frontmatter"


def _row(row: sqlite3.Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    out = dict(row)
    out["frontmatter"] = json.loads(out["frontmatter"])
    return out


def find_page(conn: sqlite3.Connection, ref: str) -> dict[str, Any] | None:
    """A page by its memory id or its wiki path."""
    row = conn.execute(f"SELECT {_FIELDS} FROM pages WHERE uid = ? OR path = ? LIMIT 1", (ref, ref)).fetchone()
    return _row(row)


def by_idempotency_key(conn: sqlite3.Connection, key: str, owner: str) -> dict[str, Any] | None:
    """The owner's earlier write with this key (keys are per owner: one user's key says nothing
    about another's pages)."""
    row = conn.execute(f"SELECT {_FIELDS} FROM pages WHERE idempotency_key = ? AND owner IS ? LIMIT 1",
                       (key, owner)).fetchone()
    return _row(row)


# A writer is compared only with pages it may see: another owner's private page must neither
# block the write nor leak its id and path through a 409.
_VISIBLE = visible_sql()


def same_text(conn: sqlite3.Connection, project: str, page_type: str, norm_hash: str, now: str,
              owner: str) -> dict[str, Any] | None:
    """A live page of the same project and type whose normalized text is the same."""
    row = conn.execute(
        f"SELECT {_FIELDS} FROM pages WHERE project = ? AND type = ? AND norm_hash = ? AND superseded_by IS NULL"
        f" AND (expires_at IS NULL OR expires_at > ?) AND {_VISIBLE} LIMIT 1",
        (project, page_type, norm_hash, now, owner)).fetchone()
    return _row(row)


def live_first_chunks(conn: sqlite3.Connection, project: str, page_type: str, model: str, now: str,
                      owner: str, limit: int = 2000) -> list[dict[str, Any]]:
    """For each live page of a project and type: its first chunk's text and vector (None if not embedded yet)."""
    rows = conn.execute(
        "SELECT p.uid, p.path, c.text, c.content_hash, e.vector FROM pages p"
        " JOIN chunks c ON c.page_id = p.id AND c.ord = 0"
        " LEFT JOIN embeddings e ON e.content_hash = c.content_hash AND e.model = ?"
        " WHERE p.project = ? AND p.type = ? AND p.superseded_by IS NULL"
        f" AND (p.expires_at IS NULL OR p.expires_at > ?) AND {visible_sql('p')}"
        " ORDER BY p.updated DESC LIMIT ?",
        (model, project, page_type, now, owner, limit)).fetchall()
    return [{"uid": r[0], "path": r[1], "text": r[2], "hash": r[3],
             "vector": None if r[4] is None else np.frombuffer(r[4], dtype=np.float32)} for r in rows]


def lineage(conn: sqlite3.Connection, ref: str, limit: int = 50) -> list[dict[str, Any]]:
    """The chain of corrections through a page, oldest first: what it replaced and what replaced it."""
    start = find_page(conn, ref)
    if start is None:
        return []
    chain = [start]
    seen = {start["path"]}
    page: dict[str, Any] | None = start
    while page is not None and page.get("supersedes") and len(chain) < limit:  # walk back
        page = find_page(conn, page["supersedes"])
        if page is None or page["path"] in seen:
            break
        chain.insert(0, page)
        seen.add(page["path"])
    page = start
    while page is not None and page.get("superseded_by") and len(chain) < limit:  # walk forward
        page = find_page(conn, page["superseded_by"])
        if page is None or page["path"] in seen:
            break
        chain.append(page)
        seen.add(page["path"])
    return [_link(p) for p in chain]


def _link(page: dict[str, Any]) -> dict[str, Any]:
    fm = page["frontmatter"]
    return {"id": page["uid"], "path": page["path"], "title": page["title"], "created": page["created"],
            "supersedes": page["supersedes"], "superseded_by": page["superseded_by"],
            "reason": fm.get("supersede_reason")}
