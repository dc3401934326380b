"""The client's local index for searches while the server is away: SQLite FTS5, lexical only.

``<data_dir>/client/cache.sqlite`` holds documents from two sources, keyed by wiki path:

- ``wiki``: this machine's copy of the wiki (``<data_dir>/wiki``, e.g. kept by git sync),
  refreshed by file mtime before each local search;
- ``seen``: pages and hits the server returned earlier (the last ``SEEN_KEEP`` are kept).

Everything here is derived and disposable: deleting the file loses nothing the server or the
wiki does not hold. Frontmatter is read with a few lines of code, not YAML (``client/`` is
standard library only): a fallback needs the title, type, id and supersession, no more.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ai_memory.client.state_files import state_db

SEEN_KEEP = 5000
MAX_WIKI_FILE = 1_000_000
_FM_LINE = re.compile(r"^([A-Za-z_]+):\s*(.*?)\s*$")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs(
    path TEXT PRIMARY KEY, source TEXT NOT NULL, uid TEXT, title TEXT NOT NULL, type TEXT NOT NULL,
    project TEXT NOT NULL, body TEXT NOT NULL, superseded INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0, seen_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_uid ON docs(uid);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(path UNINDEXED, title, body);
"""


@dataclass(frozen=True)
class Doc:
    path: str
    source: str
    uid: str | None
    title: str
    type: str
    project: str
    body: str
    superseded: bool = False
    mtime_ns: int = 0


class LocalIndex:
    """Documents from the wiki copy and earlier answers, searchable with FTS5."""

    def __init__(self, state_dir: Path, wiki_dir: Path) -> None:
        self.dir = state_dir
        self.path = state_dir / "cache.sqlite"
        self.wiki_dir = wiki_dir

    def _conn(self) -> AbstractContextManager[sqlite3.Connection]:
        return state_db(self.path, _SCHEMA, "NORMAL")  # a cache: losing the last write costs nothing

    def remember(self, docs: list[Doc]) -> None:
        """Store pages the server returned; a wiki file of the same path is fuller and wins."""
        if not docs:
            return
        with self._conn() as conn:
            conn.execute("BEGIN IMMEDIATE")
            for doc in docs:
                row = conn.execute("SELECT source, length(body) AS size FROM docs WHERE path = ?",
                                   (doc.path,)).fetchone()
                # A hit's snippet must not replace the whole page read earlier.
                if row is None or (row["source"] == "seen" and row["size"] <= len(doc.body)):
                    _put(conn, doc)
            _prune_seen(conn)
            conn.execute("COMMIT")

    def refresh_wiki(self) -> int:
        """Bring ``wiki`` documents up to date with the files (by mtime); how many changed."""
        if not self.wiki_dir.is_dir():
            return 0
        files = {str(p.relative_to(self.wiki_dir)): p for p in self.wiki_dir.rglob("*.md")
                 if ".git" not in p.parts and p.name != "index.md"}
        with self._conn() as conn:
            known = {r["path"]: r["mtime_ns"] for r in conn.execute("SELECT path, mtime_ns FROM docs WHERE source='wiki'")}
            conn.execute("BEGIN IMMEDIATE")
            changed = _index_files(conn, files, known)
            for gone in set(known) - set(files):
                _delete(conn, gone)
                changed += 1
            conn.execute("COMMIT")
        return changed

    def search(self, expr: str, projects: set[str] | None, limit: int) -> list[tuple[Doc, float]]:
        """Live documents matching an FTS5 expression, best first, with their bm25 rank."""
        if not self.path.exists():
            return []
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT d.*, bm25(docs_fts, 0, 5.0, 1.0) AS rank FROM docs_fts JOIN docs d USING (path)"
                " WHERE docs_fts MATCH ? AND d.superseded = 0 ORDER BY rank LIMIT ?", (expr, limit * 4)).fetchall()
        found = [(_doc(r), float(r["rank"])) for r in rows]
        return [(d, rank) for d, rank in found if projects is None or d.project in projects][:limit]

    def page(self, ref: str) -> Doc | None:
        """A document by wiki path or memory id."""
        if not self.path.exists():
            return None
        with self._conn() as conn:
            row = conn.execute("SELECT * FROM docs WHERE path = ? OR uid = ? LIMIT 1", (ref, ref)).fetchone()
        return None if row is None else _doc(row)


def _index_files(conn: sqlite3.Connection, files: dict[str, Path], known: dict[str, int]) -> int:
    changed = 0
    for rel, file in files.items():
        try:
            stat = file.stat()
            if known.get(rel) == stat.st_mtime_ns or stat.st_size > MAX_WIKI_FILE:
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # vanished or unreadable meanwhile: the next refresh sees it again
        _put(conn, parse_page(rel, text, stat.st_mtime_ns))
        changed += 1
    return changed


def parse_page(rel: str, text: str, mtime_ns: int = 0) -> Doc:
    """A wiki file as a document: scalar frontmatter keys by line, the rest as the body."""
    meta: dict[str, str] = {}
    body = text
    if text.startswith("---\n"):
        head, sep, rest = text[4:].partition("\n---")
        if sep:
            body = rest.split("\n", 1)[1] if "\n" in rest else ""
            for line in head.splitlines():
                m = _FM_LINE.match(line)
                if m and m.group(2):
                    meta[m.group(1)] = m.group(2).strip("'\"")
    title = meta.get("title") or Path(rel).stem
    return Doc(path=rel, source="wiki", uid=meta.get("id"), title=title, type=meta.get("type") or "Note",
               project=rel.split("/", 1)[0], body=body, superseded=bool(meta.get("superseded_by")),
               mtime_ns=mtime_ns)


def _put(conn: sqlite3.Connection, doc: Doc) -> None:
    _delete(conn, doc.path)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    conn.execute("INSERT INTO docs(path, source, uid, title, type, project, body, superseded, mtime_ns, seen_at)"
                 " VALUES (?,?,?,?,?,?,?,?,?,?)", (doc.path, doc.source, doc.uid, doc.title, doc.type, doc.project,
                                                   doc.body, int(doc.superseded), doc.mtime_ns, now))
    conn.execute("INSERT INTO docs_fts(path, title, body) VALUES (?,?,?)", (doc.path, doc.title, doc.body))


def _delete(conn: sqlite3.Connection, path: str) -> None:
    conn.execute("DELETE FROM docs WHERE path = ?", (path,))
    conn.execute("DELETE FROM docs_fts WHERE path = ?", (path,))


def _prune_seen(conn: sqlite3.Connection) -> None:
    old = conn.execute("SELECT path FROM docs WHERE source = 'seen' ORDER BY seen_at DESC LIMIT -1 OFFSET ?",
                       (SEEN_KEEP,)).fetchall()
    for row in old:
        _delete(conn, row["path"])


def _doc(row: sqlite3.Row) -> Doc:
    return Doc(path=row["path"], source=row["source"], uid=row["uid"], title=row["title"], type=row["type"],
               project=row["project"], body=row["body"], superseded=bool(row["superseded"]),
               mtime_ns=row["mtime_ns"])


def doc_from_hit(hit: Mapping[str, Any]) -> Doc | None:
    """A search hit or a page the server returned, as a ``seen`` document."""
    path = hit.get("path")
    if not isinstance(path, str) or not path:
        return None
    fm = found if isinstance(found := hit.get("frontmatter"), dict) else {}
    body = str(hit.get("body") or hit.get("snippet") or "")
    return Doc(path=path, source="seen", uid=hit.get("uid") or hit.get("id") or fm.get("id"),
               title=str(hit.get("title") or Path(path).stem), type=str(hit.get("type") or "Note"),
               project=str(hit.get("project") or path.split("/", 1)[0]), body=body,
               superseded=bool(fm.get("superseded_by")))
