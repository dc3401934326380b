"""Projects in the index: the alias tables derived from the projects file, the rows that follow
a rename, a merge or a moved session, and what a project holds.

``apply_map`` is idempotent: it makes the tables equal to the file's map and moves every row
still under a name that is now an alias (or of a session moved elsewhere), and every row naming
a page by a path under an old name's folder that only the new folder holds. It runs after each
lifecycle verb, at start, after a reindex and when a sync brings a new file, so an index that
missed a verb (a crash between the git commit and the rows) catches up by itself.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.names import project_name
from ai_memory.core.project_map import ProjectMap
from ai_memory.core.terms import index_text
from ai_memory.store.cache_stamp import count_rewrite

# (table, column) pairs holding a project name, moved with the project
_PROJECT_COLUMNS = (("sessions", "project"), ("handoffs", "project"), ("messages", "to_project"),
                    ("messages", "from_project"))
# (table, column) pairs holding a page path, moved with the page
_PATH_COLUMNS = (("sessions", "page_path"), ("handoffs", "page_path"), ("llm_jobs", "page_path"),
                 ("page_stats", "path"), ("recall_given", "path"))


def project_for(conn: sqlite3.Connection, project: str | None, session_id: str | None) -> str | None:
    """The project an incoming event belongs to now (its session's move first, then an alias)."""
    if session_id is not None:
        row = conn.execute("SELECT project FROM session_projects WHERE session_id = ?", (session_id,)).fetchone()
        if row is not None:
            return str(row[0])
    if project is None:
        return None
    row = conn.execute("SELECT project FROM project_aliases WHERE alias = ?", (project,)).fetchone()
    return project if row is None else str(row[0])


def aliases(conn: sqlite3.Connection) -> dict[str, str]:
    return {str(a): str(p) for a, p in conn.execute("SELECT alias, project FROM project_aliases")}


def apply_map(conn: sqlite3.Connection, pmap: ProjectMap) -> int:
    """Make the alias tables the map's and move the rows still under an old name; the rows moved."""
    conn.execute("DELETE FROM project_aliases")
    conn.executemany("INSERT INTO project_aliases(alias, project) VALUES (?, ?)", sorted(pmap.aliases.items()))
    conn.execute("DELETE FROM session_projects")
    conn.executemany("INSERT INTO session_projects(session_id, project) VALUES (?, ?)", sorted(pmap.sessions.items()))
    moved = 0
    for old, new in sorted(pmap.aliases.items()):
        moved += _move_observations(conn, "project = ?", (old,), new)
        for table, column in _PROJECT_COLUMNS:
            moved += conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (new, old)).rowcount
        moved += _follow_folder(conn, old, new)
    for session_id, project in sorted(pmap.sessions.items()):
        moved += _move_observations(conn, "session_id = ? AND project IS NOT ?", (session_id, project), project)
        for table in ("sessions", "handoffs"):
            key = "id" if table == "sessions" else "session_id"
            moved += conn.execute(f"UPDATE {table} SET project = ? WHERE {key} = ? AND project IS NOT ?",
                                  (project, session_id, project)).rowcount
    if moved:
        count_rewrite(conn)
    return moved


def _follow_folder(conn: sqlite3.Connection, old: str, new: str) -> int:
    """Rows naming a page under ``old/`` where no page is but its path under ``new/`` is (a
    crash after the verb's commit, or a verb stopped midway, left them behind)."""
    moved = 0
    for table, column in _PATH_COLUMNS:
        moved += conn.execute(
            f"UPDATE OR REPLACE {table} SET {column} = :new || '/' || substr({column}, :cut)"
            f" WHERE substr({column}, 1, :cut - 1) = :old || '/'"
            f" AND NOT EXISTS (SELECT 1 FROM pages WHERE path = {table}.{column})"
            f" AND EXISTS (SELECT 1 FROM pages WHERE path = :new || '/' || substr({table}.{column}, :cut))",
            {"old": old, "new": new, "cut": len(old) + 2}).rowcount
    return moved


def _move_observations(conn: sqlite3.Connection, where: str, args: tuple[Any, ...], project: str) -> int:
    """Observations to ``project``, with their full-text rows (an external-content index: the
    old row is deleted with the very terms it was indexed with)."""
    rows = conn.execute(f"SELECT rowid, title, body, project, json_extract(payload, '$.ai_memory_tool') IS NULL"
                        f" FROM observations WHERE {where}", args).fetchall()
    for rowid, title, body, old, indexed in rows:
        if indexed:  # ai-memory's own tool calls are kept for the record, never indexed (as fts_rows.rebuild)
            terms = (index_text(title), index_text(body))
            conn.execute("INSERT INTO observations_fts(observations_fts, rowid, title, body, project)"
                         " VALUES ('delete', ?, ?, ?, ?)", (rowid, *terms, old))
            conn.execute("INSERT INTO observations_fts(rowid, title, body, project) VALUES (?, ?, ?, ?)",
                         (rowid, *terms, project))
        conn.execute("UPDATE observations SET project = ? WHERE rowid = ?", (project, rowid))
    return len(rows)


def move_paths(conn: sqlite3.Connection, moves: dict[str, str]) -> None:
    """Rows naming a page by path follow the page to its new path (its usage, its session, its
    handoff, a queued consolidation job)."""
    for table, column in _PATH_COLUMNS:
        conn.executemany(f"UPDATE OR REPLACE {table} SET {column} = ? WHERE {column} = ?",
                         [(new, old) for old, new in moves.items()])


def project_paths(conn: sqlite3.Connection, project: str) -> list[str]:
    """The indexed pages of ``project`` (by the project their file says), by path."""
    return [str(r[0]) for r in conn.execute("SELECT path FROM pages WHERE project = ? ORDER BY path", (project,))]


def under_old_names(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Old names that still hold indexed pages (by folder or by frontmatter), their project and how many: a
    sync from a machine that had not seen the rename, or a project line that could not be
    rewritten; ``project merge OLD NEW`` brings them home."""
    found = conn.execute(
        "SELECT a.alias, a.project, COUNT(DISTINCT p.path) FROM project_aliases a JOIN pages p"
        " ON p.project = a.alias OR substr(p.path, 1, length(a.alias) + 1) = a.alias || '/'"
        " GROUP BY a.alias ORDER BY a.alias").fetchall()
    return {str(alias): {"project": str(project), "pages": int(n)} for alias, project, n in found}


def folder_mismatches(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Folders holding pages whose ``project:`` line names another project (and no old name
    explains it: ``under_old_names`` lists those): a folder renamed by hand or in Obsidian, a
    page moved between folders, a verb a crash cut short. ``[{folder, project, pages}]``."""
    rows = conn.execute(
        "SELECT substr(path, 1, instr(path, '/') - 1) AS folder, project, COUNT(*) FROM pages"
        " WHERE instr(path, '/') > 0 AND json_extract(frontmatter, '$.project') IS NOT NULL"
        " AND substr(path, 1, length(project) + 1) != project || '/'"
        " AND project NOT IN (SELECT alias FROM project_aliases)"
        " AND substr(path, 1, instr(path, '/') - 1) NOT IN (SELECT alias FROM project_aliases)"
        " GROUP BY folder, project ORDER BY folder, project").fetchall()
    found: dict[tuple[str, str], int] = {}
    for folder, project, n in rows:
        named = project_name(str(project))
        if named != folder:  # "Acme API" lives in acme-api/
            found[(str(folder), named or str(project))] = found.get((str(folder), named or str(project)), 0) + int(n)
    return [{"folder": f, "project": p, "pages": n} for (f, p), n in sorted(found.items())]


def known(conn: sqlite3.Connection, project: str) -> bool:
    """Whether any page, session or handoff is under ``project``."""
    return any(conn.execute(f"SELECT 1 FROM {table} WHERE project = ? LIMIT 1", (project,)).fetchone()
               for table in ("pages", "sessions", "handoffs"))


def session_of(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT id, project, page_path FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        return None
    pages = [str(r[0]) for r in conn.execute("SELECT path FROM pages WHERE session_id = ? AND type = 'Session Summary'",
                                             (session_id,))]
    return {"id": row[0], "project": row[1], "page_path": row[2], "pages": pages}
