"""Lint: what is wrong with the wiki as a body of knowledge, each finding with a concrete fix.

Read-only: it reads the index (a read-only connection), lists files and compares them with the
index; it never changes a page or a row. Rules, in the order they are reported:

- ``contradiction``: a page's ``relations: {contradicts: [...]}`` names a page, both are live
  (neither superseded nor expired) and neither supersedes the other. Reported once per pair.
- ``broken-link``: a wikilink, embed, markdown link or relation whose target resolves to no file.
  Links resolve as Obsidian resolves them (``core.links``: relative path, vault path, partial
  path, file name, frontmatter ``aliases``; any file, so ``![[diagram.png]]`` finds
  ``attachments/diagram.png``), so this reports the links Obsidian shows as unresolved (besides
  a bare ``[[alias]]``, which Obsidian leaves unresolved and we accept). A relation may also name
  a page by its title. Session pages are not checked: their links are quoted from prompts and
  tool output.
- ``orphan``: a hand-written page with no link out and no link in from another page. Session
  pages (reached by session id and date), structured memories (records with an ``id``, reached by
  search and supersession, rarely linked by design) and conflict copies are not held to it; the
  generated ``index.md`` is not a page and its links do not count (it links to everything).
  ``supersedes``/``superseded_by`` count as links.
- ``duplicate-title``: two or more live pages of one project share a title (case-insensitive).
  Session pages are left out: they are titled by their first prompt, which repeats.
- ``expired``: ``expires_at`` is past but the file is still in the wiki.
- ``broken-frontmatter``: the page parsed with problems (bad YAML, an unknown type, not UTF-8, ...); a plain note without frontmatter is a Note, not broken.
- ``oversized``: the file is larger than ``OVERSIZED_BYTES``.
- ``index-drift``: files and index disagree (``reindex.check``), in two passes a moment apart so
  a write in flight (file written, rows not yet committed) is not reported.
- ``conflict-copy``: a sync tool's conflict copy (``x.conflict-*.md``, ``x.sync-conflict-*.md``).
- ``index-blocked``: a project folder's ``index.md`` that ai-memory did not write, so the
  generated index is not written there (it never replaces a file it did not write).
- ``symlink``: a symbolic link in the wiki (to a file or a folder). ai-memory never follows one:
  what it points at is not indexed, served nor written.
- ``old-project-name``: pages still under a name a rename or a merge gave up.
- ``project-folder``: pages in one project's folder whose ``project:`` line names another (a
  folder renamed by hand or in Obsidian, a page moved, a verb a crash cut short): search and the
  briefing file them under the line's project.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.links import Vault, aliases_of
from ai_memory.core.users import ADMIN
from ai_memory.store.connection import open_read_connection
from ai_memory.store.page_graph import all_links
from ai_memory.store.pages import pages_by_path
from ai_memory.store.projects import folder_mismatches, under_old_names
from ai_memory.store.reader import Reader
from ai_memory.store.users import hidden_page_paths
from ai_memory.wiki.files import IGNORED_DIRS, iter_pages
from ai_memory.wiki.project_index import blocked_indexes
from ai_memory.wiki.reindex import check

RULES = ("contradiction", "broken-link", "orphan", "duplicate-title", "expired", "broken-frontmatter",
         "oversized", "index-drift", "conflict-copy", "index-blocked", "symlink", "old-project-name",
         "project-folder")
# Larger than this, a page is no longer one piece of knowledge: agents read pages whole
# (memory_read_page cuts at 20,000 characters by default) and retrieval ranks it by its best chunk.
OVERSIZED_BYTES = 100_000
CONFLICT_COPY = re.compile(r"\.(?:sync-)?conflict-[^/]*\.md$")
DRIFT_RECHECK_S = 0.5
SESSION_TYPE = "Session Summary"


@dataclass(frozen=True)
class Finding:
    rule: str
    path: str
    detail: str
    fix: str


@dataclass
class LintReport:
    pages: int = 0
    findings: list[Finding] = field(default_factory=list)
    linted_at: str = ""  # when the files and the index were read (a cached report keeps its time)

    @property
    def clean(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = defaultdict(int)
        for finding in self.findings:
            counts[finding.rule] += 1
        return {"clean": self.clean, "pages": self.pages, "counts": dict(counts),
                "findings": [asdict(f) for f in self.findings], "linted_at": self.linted_at}


@dataclass(frozen=True)
class _Page:
    id: int
    path: str
    project: str
    type: str
    title: str
    uid: str | None
    size: int
    expires_at: str | None
    supersedes: str | None
    superseded_by: str | None
    problems: list[str]
    pinned: bool
    aliases: tuple[str, ...] = ()

    def live(self, now: str) -> bool:
        return not self.superseded_by and not (self.expires_at and self.expires_at <= now)

    @property
    def ref(self) -> str:
        return self.uid or self.path


def lint(wiki_dir: Path, raw_dir: Path, db_path: Path, now: str | None = None) -> LintReport:
    """Every finding of every rule; changes nothing."""
    now = now or now_iso()
    conn = open_read_connection(db_path)
    try:
        pages = _pages(conn)
        links = all_links(conn)
        blocked = blocked_indexes(conn, wiki_dir)
        stranded = under_old_names(conn)
        mismatched = folder_mismatches(conn)
    finally:
        conn.close()
    report = LintReport(pages=len(pages), linted_at=now)
    by_id = {p.id: p for p in pages}
    resolver = _Resolver(pages, _vault_files(wiki_dir))
    report.findings += _contradictions(links, by_id, resolver, now)
    report.findings += _broken_links(links, by_id, resolver)
    report.findings += _orphans(links, by_id, resolver)
    report.findings += _duplicate_titles(pages, now)
    report.findings += _expired(pages, wiki_dir, now)
    report.findings += [_broken(p) for p in pages if p.problems]
    report.findings += [_oversized(p) for p in pages if p.size > OVERSIZED_BYTES]
    report.findings += [_drift_finding(d) for d in persistent_drift(wiki_dir, raw_dir, db_path)]
    symlinks: list[str] = []
    report.findings += _conflict_copies(wiki_dir, symlinks)
    report.findings += [_blocked(rel) for rel in blocked]
    report.findings += [_under_old_name(old, left) for old, left in stranded.items()]
    report.findings += [_project_folder(**found) for found in mismatched]
    report.findings += [_symlink(wiki_dir, rel) for rel in symlinks]
    report.findings.sort(key=lambda f: (RULES.index(f.rule), f.path, f.detail))
    return report


async def visible_report(owner: str, reader: Reader, report: LintReport) -> LintReport:
    """The report ``owner`` may read: a finding that names another user's private page (as its
    subject or in its text) is left out."""
    if owner == ADMIN:
        return report
    hidden = await reader.run(lambda c: hidden_page_paths(c, owner))
    if not hidden:
        return report
    kept = [f for f in report.findings
            if f.path not in hidden and not any(p in f.detail or p in f.fix for p in hidden)]
    return LintReport(pages=report.pages - len(hidden), findings=kept, linted_at=report.linted_at)


def persistent_drift(wiki_dir: Path, raw_dir: Path, db_path: Path) -> list[str]:
    """The differences ``reindex.check`` reports twice, ``DRIFT_RECHECK_S`` apart.

    On a running daemon a page file is written just before its rows, and a journal line just
    before its commit; a difference that has gone a moment later was such a write, not drift.
    """
    first = check(wiki_dir, raw_dir, db_path).differences
    if not first:
        return []
    time.sleep(DRIFT_RECHECK_S)
    again = set(check(wiki_dir, raw_dir, db_path).differences)
    return [d for d in first if d in again]


def _pages(conn: sqlite3.Connection) -> list[_Page]:
    rows = pages_by_path(conn)
    return [_Page(int(r[0]), r[1], r[2], r[3], r[4], r[5], int(r[6]), r[7], r[8], r[9], json.loads(r[10] or "[]"),
                  bool(r[11]), tuple(aliases_of(json.loads(r[12] or "{}")))) for r in rows]


def _vault_files(wiki_dir: Path) -> list[str]:
    """Every file a link may name, pages or not (attachments, a README), as Obsidian lists them."""
    found = []
    for root, dirs, files in os.walk(wiki_dir):
        dirs[:] = [d for d in dirs if d not in IGNORED_DIRS and not d.startswith(".")]
        found += [(Path(root) / name).relative_to(wiki_dir).as_posix() for name in files if not name.startswith(".")]
    return found


class _Resolver:
    """Link targets to page ids: Obsidian's resolution over the vault's files (``core.links``);
    a relation may also name a page by its title."""

    def __init__(self, pages: list[_Page], files: list[str]) -> None:
        self._vault = Vault(files, {p.path: list(p.aliases) for p in pages if p.aliases})
        self._id = {page.path: page.id for page in pages}
        self._title: dict[str, list[int]] = defaultdict(list)
        for page in pages:
            self._title[page.title.lower()].append(page.id)

    def files(self, target: str, source: str) -> list[str]:
        """The files a link means (pages or not); empty: unresolved."""
        return self._vault.resolve(target, source)

    def resolve(self, target: str, source: str, kind: str = "link") -> set[int]:
        """The pages a link (or a relation) means."""
        found = {self._id[f] for f in self.files(target, source) if f in self._id}
        if kind != "link":
            found |= set(self._title.get(target.strip().lower(), ()))
        return found

    def resolves(self, target: str, source: str, kind: str) -> bool:
        return bool(self.files(target, source)) or bool(kind != "link" and self.resolve(target, source, kind))


def _contradictions(links: list[tuple[int, str, str]], by_id: dict[int, _Page], resolver: _Resolver,
                    now: str) -> list[Finding]:
    found, seen = [], set()
    for src, target, kind in links:
        page = by_id[src]
        if kind != "contradicts" or not page.live(now):
            continue
        for other in (by_id[i] for i in resolver.resolve(target, page.path, kind) if i != src):
            pair = frozenset((page.id, other.id))
            if pair in seen or not other.live(now) or _supersedes(page, other) or _supersedes(other, page):
                continue
            seen.add(pair)
            found.append(Finding(
                "contradiction", page.path, f"contradicts {other.path}; both are live",
                f"decide which holds: supersede the wrong one (ai-memory correct {other.ref} \"<corrected text>\""
                f" --reason \"...\"), or if both hold, remove {target} from relations.contradicts in {page.path}"))
    return found


def _supersedes(newer: _Page, older: _Page) -> bool:
    return bool(newer.supersedes) and newer.supersedes in (older.uid, older.path)


def _broken_links(links: list[tuple[int, str, str]], by_id: dict[int, _Page], resolver: _Resolver) -> list[Finding]:
    found = []
    for src, target, kind in links:
        # a session page's links are quoted from prompts and tool output, not written by anyone
        if by_id[src].type == SESSION_TYPE or resolver.resolves(target, by_id[src].path, kind):
            continue
        path = by_id[src].path
        if kind == "link":
            fix = f"create the page {target}, or correct or remove the link to it in {path}"
            detail = f"links to {target}, which is no page"
        else:
            fix = f"correct {target} or remove it from relations.{kind} in {path}"
            detail = f"relation {kind} names {target}, which is no page"
        found.append(Finding("broken-link", path, detail, fix))
    return found


def _orphans(links: list[tuple[int, str, str]], by_id: dict[int, _Page], resolver: _Resolver) -> list[Finding]:
    linked: set[int] = set()
    for src, target, kind in links:
        linked.add(src)  # a link out, even a broken one (that one is its own finding)
        linked |= resolver.resolve(target, by_id[src].path, kind) - {src}
    for page in by_id.values():  # supersession is a link both ways
        if page.supersedes or page.superseded_by:
            linked.add(page.id)
    return [Finding("orphan", p.path, "no page links to it and it links to none",
                    f"link it from a related page ([[{p.path.removesuffix('.md')}]]) or link it to one;"
                    f" or delete it if it is no longer useful (ai-memory delete {p.path})")
            for p in by_id.values()
            if p.id not in linked and p.type != SESSION_TYPE and not p.uid and not CONFLICT_COPY.search(p.path)]


def _duplicate_titles(pages: list[_Page], now: str) -> list[Finding]:
    groups: dict[tuple[str, str], list[_Page]] = defaultdict(list)
    for page in pages:
        if page.live(now) and page.type != SESSION_TYPE and not CONFLICT_COPY.search(page.path):
            groups[(page.project, page.title.strip().lower())].append(page)
    found = []
    for group in (g for g in groups.values() if len(g) > 1):
        for page in group:
            others = ", ".join(o.path for o in group if o is not page)
            found.append(Finding(
                "duplicate-title", page.path, f"title {page.title!r} is also the title of {others}",
                f"merge them: keep one and supersede the other (ai-memory correct {page.ref} ...), or retitle one"))
    return found


def _expired(pages: list[_Page], wiki_dir: Path, now: str) -> list[Finding]:
    return [Finding("expired", p.path, f"expired at {p.expires_at} but the file is still in the wiki",
                    _expired_fix(p))
            for p in pages
            if p.expires_at and p.expires_at <= now and not p.superseded_by and (wiki_dir / p.path).exists()]


def _expired_fix(page: _Page) -> str:
    if page.pinned:  # the forget sweep never removes a pinned page: a person has to decide
        return (f"it is pinned, so the forget sweep keeps it: delete it (ai-memory delete {page.ref}; git history"
                " keeps it), or move expires_at forward if it still holds")
    return ("run: ai-memory forget-sweep (removes expired pages; git history keeps them), or move expires_at"
            " forward if it still holds")


def _broken(page: _Page) -> Finding:
    return Finding("broken-frontmatter", page.path, "; ".join(page.problems),
                   f"edit {page.path}: fix the YAML between the --- lines and give it a known type"
                   " (Decision, Fact, Note, ...); ai-memory re-indexes it within a second")


def _oversized(page: _Page) -> Finding:
    return Finding("oversized", page.path, f"{page.size} bytes (limit {OVERSIZED_BYTES})",
                   "split it into smaller pages, one topic each, linked with [[...]]")


def _drift_finding(difference: str) -> Finding:
    what, _, subject = difference.partition(": ")
    if "observation" in what:
        return Finding("index-drift", f"raw/ ({subject})", what,
                       "run: ai-memory reindex (rebuilds the index from wiki/ and raw/)")
    return Finding("index-drift", subject or difference, what,
                   "run: ai-memory reindex (or wait for the next reconcile, every wiki.reconcile_interval_s)")


def _symlink(wiki_dir: Path, rel: str) -> Finding:
    try:
        target = os.readlink(wiki_dir / rel)
    except OSError:
        target = "?"
    return Finding("symlink", rel, f"a symbolic link (to {target}); ai-memory never reads, serves or writes"
                   " through one", f"put the file itself at {rel} (or remove the link): what it points at is"
                   " ignored until then")


def _conflict_copies(wiki_dir: Path, links: list[str]) -> list[Finding]:
    """Conflict copies among the pages; the walk also collects the symlinks into ``links``."""
    found = []
    for rel, _ in iter_pages(wiki_dir, links):
        if CONFLICT_COPY.search(rel):
            original = CONFLICT_COPY.sub(".md", rel)
            found.append(Finding("conflict-copy", rel, f"a sync conflict copy of {original}",
                                 f"compare it with {original}, merge what is missing into that page,"
                                 f" then delete {rel}"))
    return found


def _blocked(rel: str) -> Finding:
    return Finding("index-blocked", rel, "ai-memory did not write this file, so the project's generated index"
                   " is not written here", f"nothing, if you want to keep {rel} as it is; to get the generated"
                   " index, rename your file: ai-memory writes the index at the folder's next change")


def _under_old_name(old: str, left: dict[str, Any]) -> Finding:
    return Finding("old-project-name", f"{old}/", f"{left['pages']} pages still under {old}, an old name of"
                   f" {left['project']} (by folder or by their project: line)",
                   f"run: ai-memory project merge {old} {left['project']} (a page it lists as not rewritten:"
                   " change its project line by hand)")


def _project_folder(folder: str, project: str, pages: int) -> Finding:
    return Finding("project-folder", f"{folder}/", f"{pages} pages in {folder}/ say project: {project}, so search"
                   f" and the briefing file them under {project}",
                   f"if {folder}/ is {project}'s folder under a new name (renamed by hand or in Obsidian): ai-memory"
                   f" project merge {project} {folder}; if they belong to {project}: move them into {project}/;"
                   " otherwise change their project: line")
