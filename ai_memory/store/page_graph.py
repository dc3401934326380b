"""Reads of the page graph: the entities pages share, the links between pages, and the pages a
link target names."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection


def entity_page_counts(conn: sqlite3.Connection, entities: list[str]) -> dict[str, int]:
    """How many pages hold each of ``entities`` (an entity no page holds is absent)."""
    marks = ",".join("?" * len(entities))
    return dict(conn.execute(f"SELECT entity, COUNT(*) FROM page_entities WHERE entity IN ({marks}) GROUP BY entity",
                             entities).fetchall())


def entity_pages(conn: sqlite3.Connection, entities: list[str],
                 projects: Collection[str] | None) -> list[tuple[int, str]]:
    """(page id, entity) of the pages holding one of ``entities``, within ``projects`` (None: all)."""
    marks = ",".join("?" * len(entities))
    sql = f"SELECT e.page_id, e.entity FROM page_entities e WHERE e.entity IN ({marks})"
    args: list[str] = list(entities)
    if projects is not None:  # the scope's page ids from the project index, not from each page's row
        sql += f" AND e.page_id IN (SELECT id FROM pages WHERE project IN ({','.join('?' * len(projects))}))"
        args += sorted(projects)
    return conn.execute(sql, args).fetchall()


def pages_named(conn: sqlite3.Connection, name: str, leaf: str) -> list[int]:
    """Up to 5 pages a link names: by path (``name``, with or without .md), stem or lower-case
    title (``leaf``). Every branch is an indexed lookup: no table scan per link."""
    rows = conn.execute(
        "SELECT id FROM pages WHERE path IN (?, ?) UNION SELECT id FROM pages WHERE stem = ?"
        " UNION SELECT id FROM pages WHERE lower(title) = ? LIMIT 5",
        (name + ".md", name, leaf, leaf),
    ).fetchall()
    return [int(r[0]) for r in rows]


def page_name(conn: sqlite3.Connection, page_id: int) -> tuple[str, str | None] | None:
    """(path, title) of a page; None when there is no such page."""
    row = conn.execute("SELECT path, title FROM pages WHERE id = ?", (page_id,)).fetchone()
    return None if row is None else (row["path"], row["title"])


def page_paths(conn: sqlite3.Connection, ids: list[int]) -> list[str]:
    return [str(r[0]) for r in conn.execute(f"SELECT path FROM pages WHERE id IN ({','.join('?' * len(ids))})", ids)]


def links_from(conn: sqlite3.Connection, page_id: int, by_target: bool = False) -> list[tuple[str, str]]:
    """(target, kind) of the links a page makes (``by_target``: in target order)."""
    if by_target:
        return conn.execute("SELECT target, kind FROM links WHERE src_id = ? ORDER BY target", (page_id,)).fetchall()
    return conn.execute("SELECT target, kind FROM links WHERE src_id = ?", (page_id,)).fetchall()


def links_to(conn: sqlite3.Connection, names: Collection[str]) -> list[tuple[int, str]]:
    """(source page id, kind) of the links whose target is one of ``names``."""
    marks = ",".join("?" * len(names))
    return conn.execute(f"SELECT src_id, kind FROM links WHERE target IN ({marks})", list(names)).fetchall()


def linking_pages(conn: sqlite3.Connection, names: Collection[str],
                  page_id: int) -> list[tuple[str, str | None, str]]:
    """(path, title, kind) of the other pages linking to one of ``names``, in path order."""
    return conn.execute(
        f"SELECT DISTINCT p.path, p.title, l.kind FROM links l JOIN pages p ON p.id = l.src_id"
        f" WHERE l.target IN ({','.join('?' * len(names))}) AND l.src_id != ? ORDER BY p.path",
        [*names, page_id]).fetchall()


def all_links(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    """(source page id, target, kind) of every link."""
    return [(int(r[0]), str(r[1]), str(r[2])) for r in conn.execute("SELECT src_id, target, kind FROM links")]
