"""Wiki pages in SQLite: the index rows of a page (row, FTS, entities, links) and their reads.

Every write here is a writer job, so a page's rows change in one transaction: the index is
never half-updated. The rows are derived from the file; the file is the truth.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from ai_memory.core.chunks import chunk_text, text_hash
from ai_memory.core.clock import now_iso
from ai_memory.core.entities import extract_entities, normalize_entity
from ai_memory.core.memory import correction_hides, normalized_hash
from ai_memory.core.page import GLOBAL_PROJECT, ParsedPage
from ai_memory.core.users import visible_sql
from ai_memory.store.connection import inserted_rowid
from ai_memory.store.fts_rows import insert_page_terms, page_terms
from ai_memory.store.writer import Job, WriteTx

ENTITY_LIMIT = 80


@dataclass(frozen=True)
class FileState:
    """What the index believes about a file: enough to notice an external change cheaply."""

    content_hash: str
    mtime_ns: int
    size: int


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class PageRows:
    """Every index row of one page, worked out from the page alone (no database): its
    frontmatter as JSON, its analysed full-text columns, entities, chunks. Pure and picklable,
    so a rebuild computes them in a helper process while it writes the ones before."""

    page: ParsedPage
    frontmatter: str
    norm_hash: str
    fts: tuple[str, str, str]  # title, summary and body as the index stores them (``core.terms``)
    entities: list[tuple[str, str, str]]  # (key, display, source)
    chunks: list[tuple[str, str]]  # (text, content hash)


def page_rows(page: ParsedPage) -> PageRows:
    chunks = chunk_text(page.title, page.body)
    return PageRows(page, json.dumps(page.meta, default=str, ensure_ascii=False), normalized_hash(page.body),
                    page_terms(page.title, page.summary, page.body), _entities(page),
                    [(c, text_hash(c)) for c in chunks])


def index_page_rows(conn: sqlite3.Connection, page: ParsedPage, mtime_ns: int, size: int) -> int:
    """Replace every index row of ``page.path`` with rows for this version; return the page id."""
    return store_page_rows(conn, page_rows(page), mtime_ns, size)


def store_page_rows(conn: sqlite3.Connection, rows: PageRows, mtime_ns: int, size: int) -> int:
    """``index_page_rows`` with the rows already worked out (``page_rows``)."""
    page = rows.page
    _drop_current_rows(conn, page.path)
    meta = page.meta
    cur = conn.execute(
        "INSERT INTO pages(path, project, type, title, tier, summary, body, frontmatter, content_hash,"
        " mtime_ns, size, created, updated, session_id, agent, pinned, expires_at, supersedes,"
        " superseded_by, problems, indexed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            page.path, page.project, page.type, page.title, page.tier, page.summary, page.body,
            rows.frontmatter, page.content_hash, mtime_ns, size,
            _text(meta.get("created")), _text(meta.get("updated")), _text(meta.get("session_id")),
            _text(meta.get("agent")), 1 if meta.get("pinned") else 0, _text(meta.get("expires_at")),
            _text(meta.get("supersedes")), _text(meta.get("superseded_by")),
            json.dumps(page.problems), now_iso(),
        ),
    )
    page_id = inserted_rowid(cur)
    _set_memory_columns(conn, page_id, page, rows.norm_hash)
    insert_page_terms(conn, page_id, rows.fts, page.project)
    conn.executemany("INSERT INTO page_entities(page_id, entity, display, source) VALUES (?,?,?,?)",
                     [(page_id, *entity) for entity in rows.entities])
    conn.executemany("INSERT INTO chunks(page_id, ord, text, content_hash) VALUES (?,?,?,?)",
                     [(page_id, i, text, digest) for i, (text, digest) in enumerate(rows.chunks)])
    conn.executemany("INSERT OR IGNORE INTO links(src_id, target, kind) VALUES (?,?,?)",
                     [(page_id, target, kind) for target, kind in page.links])
    return page_id


def _set_memory_columns(conn: sqlite3.Connection, page_id: int, page: ParsedPage, norm_hash: str) -> None:
    """Columns of structured memories; supersession is read from both ends of the link, so a
    correction whose second file write was interrupted still hides the page it corrects."""
    meta = page.meta
    uid = _text(meta.get("id"))
    scope = str(meta.get("scope") or (GLOBAL_PROJECT if page.project == GLOBAL_PROJECT else "project"))
    stem = page.path.rsplit("/", 1)[-1].removesuffix(".md").lower()
    conn.execute(
        "UPDATE pages SET stem = ?, uid = ?, scope = ?, owner = ?, norm_hash = ?, idempotency_key = ?"
        " WHERE id = ?",
        (stem, uid, scope, _text(meta.get("owner")), norm_hash, _text(meta.get("idempotency_key")), page_id),
    )
    owner = _text(meta.get("owner"))
    if not meta.get("superseded_by"):
        refs = [r for r in (uid, page.path) if r]
        newer = [r for r in conn.execute(
            f"SELECT COALESCE(uid, path), scope, owner FROM pages WHERE supersedes IN ({','.join('?' * len(refs))})"
            " AND id != ? ORDER BY created DESC", (*refs, page_id)) if correction_hides(scope, owner, r[1], r[2])]
        if newer:
            conn.execute("UPDATE pages SET superseded_by = ? WHERE id = ?", (newer[0][0], page_id))
    if meta.get("supersedes"):
        ref = str(meta["supersedes"])
        for old_id, old_scope, old_owner in conn.execute(
                "SELECT id, scope, owner FROM pages WHERE (uid = ? OR path = ?) AND superseded_by IS NULL AND id != ?",
                (ref, ref, page_id)).fetchall():
            if correction_hides(old_scope, old_owner, scope, owner):
                conn.execute("UPDATE pages SET superseded_by = ? WHERE id = ?", (uid or page.path, old_id))


def _entities(page: ParsedPage) -> list[tuple[str, str, str]]:
    """The page's entities (key, display, source): those its frontmatter declares, its tags,
    and the names in its text. A compiled session page declares the names of its prompts, replies, files and
    commands; its body is rendered from the same events, with headings and labels around them
    ("Tool calls", "_None._") that are no names, so it is not read again."""
    seen: dict[str, tuple[str, str]] = {}
    declared = [(e, "frontmatter") for e in page.entities] + [(t, "tag") for t in page.tags]
    compiled = page.type == "Session Summary" and bool(page.entities)
    extracted = [] if compiled else [
        (e, "text") for e in extract_entities(f"{page.title}\n{page.summary}\n{page.body[:20000]}")]
    for display, source in declared + extracted:
        key = normalize_entity(display)
        if key and key not in seen and len(seen) < ENTITY_LIMIT:
            seen[key] = (display[:200], source)
    return [(key, display, source) for key, (display, source) in seen.items()]


def remove_page_rows(conn: sqlite3.Connection, path: str) -> bool:
    """The file is gone: drop its index rows (its history closes with the commit that removed it)."""
    return _drop_current_rows(conn, path)


def _drop_current_rows(conn: sqlite3.Connection, path: str) -> bool:
    row = conn.execute("SELECT id FROM pages WHERE path = ?", (path,)).fetchone()
    if row is None:
        return False
    conn.execute("DELETE FROM pages_fts WHERE rowid = ?", (row[0],))
    conn.execute("DELETE FROM pages WHERE id = ?", (row[0],))
    return True


def remove_page(path: str) -> Job[bool]:
    """A writer job removing a page that no longer exists on disk."""

    def job(tx: WriteTx) -> bool:
        return remove_page_rows(tx.conn, path)

    return job


def restat_page(path: str, mtime_ns: int, size: int) -> Job[None]:
    """A writer job recording a page's new stat when its bytes did not change."""

    def job(tx: WriteTx) -> None:
        set_page_stat(tx.conn, path, mtime_ns, size)

    return job


def set_page_stat(conn: sqlite3.Connection, path: str, mtime_ns: int, size: int) -> None:
    conn.execute("UPDATE pages SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path))


def page_session(conn: sqlite3.Connection, path: str) -> str | None:
    """The session whose page is indexed at ``path`` (None: no page there, or not a session's)."""
    row = conn.execute("SELECT session_id FROM pages WHERE path = ?", (path,)).fetchone()
    return row[0] if row else None


def stale_paths(conn: sqlite3.Connection, on_disk: dict[str, tuple[int, int]]) -> tuple[list[str], list[str]]:
    """What a reconcile must look at again, given every page file's (mtime_ns, size): the files
    whose stat differs from their row or that have no row, and the rows whose file was not
    found. ``on_disk`` is emptied. The rows are read one at a time: at 100,000 pages, all of
    them read at once with their content hashes held some 40 MB on each pass."""
    stale, gone = [], []
    for path, mtime_ns, size in conn.execute("SELECT path, mtime_ns, size FROM pages"):
        stat = on_disk.pop(path, None)
        if stat is None:
            gone.append(path)
        elif stat != (mtime_ns, size):
            stale.append(path)
    stale += on_disk
    on_disk.clear()
    return stale, sorted(gone)


def file_states(conn: sqlite3.Connection) -> dict[str, FileState]:
    rows = conn.execute("SELECT path, content_hash, mtime_ns, size FROM pages").fetchall()
    return {r[0]: FileState(r[1], int(r[2]), int(r[3])) for r in rows}


def file_state(conn: sqlite3.Connection, rel: str) -> FileState | None:
    row = conn.execute("SELECT content_hash, mtime_ns, size FROM pages WHERE path = ?", (rel,)).fetchone()
    return None if row is None else FileState(row[0], int(row[1]), int(row[2]))


def count_access(paths: list[str], stamp: str) -> Job[None]:
    """The writer job counting one search hit on each page (by path in page_stats: usage is
    not in the files, and must outlive a reindex)."""
    def job(tx: WriteTx) -> None:
        tx.conn.executemany(
            "INSERT INTO page_stats(path, access_count, last_access_at) VALUES (?, 1, ?)"
            " ON CONFLICT(path) DO UPDATE SET access_count = access_count + 1, last_access_at = excluded.last_access_at",
            [(path, stamp) for path in paths])
    return job


def broken_pages(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT path, problems FROM pages WHERE problems != '[]' ORDER BY path").fetchall()
    return [{"path": r[0], "problems": json.loads(r[1])} for r in rows]


def pages_signature(conn: sqlite3.Connection) -> tuple[int, str | None]:
    """What changes whenever a page is indexed, indexed again or removed: the number of pages
    and the newest ``indexed_at`` (every indexing inserts its row anew, stamped to the microsecond)."""
    count, newest = conn.execute("SELECT COUNT(*), MAX(indexed_at) FROM pages").fetchone()
    return int(count), newest


def page_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0])


def newest_page_id(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT MAX(id) FROM pages").fetchone()[0] or 0)


def content_hashes(conn: sqlite3.Connection) -> dict[str, str]:
    """Every indexed page's content hash, by path."""
    return {r[0]: r[1] for r in conn.execute("SELECT path, content_hash FROM pages")}


def pages_by_path(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every page's row as lint reads it (no text), in path order."""
    return conn.execute(
        "SELECT id, path, project, type, title, uid, size, expires_at, supersedes, superseded_by, problems, pinned,"
        " frontmatter FROM pages ORDER BY path").fetchall()


def _in_folder(folder: str) -> tuple[str, tuple[str, str]]:
    """A WHERE clause on the path index for every page under ``folder``/ ('0' follows '/')."""
    return "path >= ? AND path < ?", (f"{folder}/", f"{folder}0")


def folder_pages(conn: sqlite3.Connection, folder: str) -> list[sqlite3.Row]:
    """The pages under the top-level ``folder`` that anyone may see, by type, newest first."""
    where, args = _in_folder(folder)
    return conn.execute(  # as no one in particular sees them: bound to no owner
        f"SELECT path, title, type, updated, superseded_by FROM pages WHERE {where} AND {visible_sql()}"
        " ORDER BY type, COALESCE(updated, '') DESC, path", (*args, None)).fetchall()


def holds_our_page(conn: sqlite3.Connection, folder: str) -> bool:
    """Whether the top-level ``folder`` holds a page ai-memory wrote (a session's, or a
    structured memory with its ``id``)."""
    where, args = _in_folder(folder)
    return conn.execute(f"SELECT 1 FROM pages WHERE {where} AND (uid IS NOT NULL OR session_id IS NOT NULL)"
                        " LIMIT 1", args).fetchone() is not None


def folders_with_our_pages(conn: sqlite3.Connection) -> list[str]:
    """The top-level folders holding a page ai-memory wrote, sorted."""
    rows = conn.execute("SELECT DISTINCT substr(path, 1, instr(path, '/') - 1) FROM pages"
                        " WHERE instr(path, '/') > 0 AND (uid IS NOT NULL OR session_id IS NOT NULL)")
    return sorted(str(r[0]) for r in rows)


def get_page(conn: sqlite3.Connection, path: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT * FROM pages WHERE path = ?", (path,)).fetchone()
    if row is None:
        return None
    page = dict(row)
    page["frontmatter"] = json.loads(page["frontmatter"])
    page["problems"] = json.loads(page["problems"])
    return page


def session_pages(conn: sqlite3.Connection, session_ids: set[str]) -> dict[str, int]:
    """The page id of each session's page: the Session Summary naming it (compiled or written by
    hand), the first one found."""
    if not session_ids:
        return {}
    ids = list(session_ids)
    out: dict[str, int] = {}
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        marks = ",".join("?" * len(part))
        for sid, page_id in conn.execute(
                f"SELECT session_id, id FROM pages WHERE session_id IN ({marks}) AND type = 'Session Summary'", part):
            out.setdefault(str(sid), int(page_id))
    return out
