"""Answering a query: page hits (with their project, type, session) and raw observation hits.

This first version ranks by full text only; the fused retrieval (entities, graph, vectors,
reranking) builds on the same request and reply shapes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.page import GLOBAL_PROJECT
from ai_memory.retrieval.fts import make_snippet, query_terms, search_observations, search_pages


@dataclass(frozen=True)
class Query:
    q: str
    project: str | None = None
    projects: tuple[str, ...] = ()
    all_projects: bool = False
    k: int = 10


@dataclass
class Answer:
    hits: list[dict[str, Any]] = field(default_factory=list)
    raw_hits: list[dict[str, Any]] = field(default_factory=list)


def _in_scope(project: str, query: Query) -> bool:
    if query.all_projects:
        return True
    allowed = set(query.projects) | ({query.project} if query.project else set())
    if not allowed:
        return True
    return project in allowed or project == GLOBAL_PROJECT


def answer(conn: sqlite3.Connection, query: Query) -> Answer:
    out = Answer()
    terms = query_terms(query.q)
    for hit in search_pages(conn, query.q, limit=max(50, query.k * 5)):
        row = conn.execute(
            "SELECT path, title, type, project, session_id, updated, body FROM pages WHERE id = ?", (hit.rowid,)
        ).fetchone()
        if row is None or not _in_scope(row["project"], query):
            continue
        item = dict(row)
        body = item.pop("body")
        out.hits.append({**item, "score": round(hit.score, 4), "snippet": make_snippet(body, terms), "evidence": []})
        if len(out.hits) >= query.k:
            break
    if not out.hits:
        for hit in search_observations(conn, query.q, limit=query.k * 3):
            row = conn.execute(
                "SELECT id, session_id, project, event, occurred_at, body FROM observations WHERE rowid = ?",
                (hit.rowid,)).fetchone()
            if row is None or not _in_scope(row["project"] or "", query):
                continue
            item = dict(row)
            body = item.pop("body")
            out.raw_hits.append({**item, "score": round(hit.score, 4), "snippet": make_snippet(body, terms)})
            if len(out.raw_hits) >= query.k:
                break
    return out
