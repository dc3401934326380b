"""The file side of a project's lifecycle: which wiki files move where, and moving them in one
git commit together with the projects file.

Files are the user's: a page moves with its folder whatever it holds, but only a page whose
frontmatter carries ``project: <old>`` (every page ai-memory writes does) has that one line
changed (``core.page.with_project``); nothing is ever moved over an existing file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from ai_memory.core.errors import Conflict
from ai_memory.core.names import project_name
from ai_memory.core.page import split_frontmatter, with_project
from ai_memory.core.project_map import MAX_BYTES, PROJECTS_FILE, ProjectMap, parse, render
from ai_memory.wiki.files import (
    atomic_write, file_kind, folder_files, lstat_file, move_file, move_folder, read_file, remove_empty_folders,
    same_file, unlink_file,
)
from ai_memory.wiki.git import commit_all
from ai_memory.wiki.project_index import INDEX_NAME, written_by_us

log = logging.getLogger(__name__)


@dataclass
class MovePlan:
    """What a rename, a merge or a session's move changes in the wiki (a dry run's answer too)."""

    verb: str
    src: str
    dst: str
    pmap: ProjectMap  # the projects file afterwards
    whole_folder: bool = False  # a rename: the folder itself is renamed
    moves: dict[str, str] = field(default_factory=dict)  # every file moved: old path → new path
    renamed: dict[str, str] = field(default_factory=dict)  # moved under another name (a clash)
    rewrite: list[str] = field(default_factory=list)  # pages (their paths afterwards) given project: dst
    stuck: list[str] = field(default_factory=list)  # pages naming src whose project line cannot be rewritten
    left: list[str] = field(default_factory=list)  # links found on the way, never moved
    drop: list[str] = field(default_factory=list)  # the merged folder's generated index.md
    git_commit: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"verb": self.verb, "from": self.src, "to": self.dst,
                "moved": [{"from": a, "to": b} for a, b in self.moves.items()],
                "renamed": [{"from": a, "to": b} for a, b in self.renamed.items()],
                "frontmatter_rewritten": self.rewrite,
                "frontmatter_not_rewritten": self.stuck, "links_left": self.left, "removed": self.drop,
                "git_commit": self.git_commit}


def map_stat(wiki_dir: Path) -> tuple[int, ...] | None:
    """What tells a changed projects file from the one last read (None: none, or not a file)."""
    try:
        st = lstat_file(wiki_dir, PROJECTS_FILE)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_map(wiki_dir: Path) -> tuple[ProjectMap, list[str]]:
    try:
        raw = read_file(wiki_dir, PROJECTS_FILE, limit=MAX_BYTES + 1)[0]
        if len(raw) > MAX_BYTES:
            return parse(None)[0], [f"{PROJECTS_FILE}: larger than {MAX_BYTES >> 20} MiB, read as empty"]
        return parse(raw)
    except FileNotFoundError:
        return parse(None)
    except OSError as exc:  # a link or a folder where the file goes: never read through it
        return parse(None)[0], [f"{PROJECTS_FILE}: not a plain file ({exc.strerror})"]


def plan_folder(wiki_dir: Path, plan: MovePlan, outside: list[str]) -> MovePlan:
    """Every file of ``src/`` to ``dst/`` (a clash renamed), and the pages given ``project: dst``:
    those moved and ``outside`` (pages elsewhere whose frontmatter names ``src``)."""
    files, links = folder_files(wiki_dir, plan.src) if file_kind(wiki_dir, plan.src) == "other" else ([], [])
    plan.whole_folder = plan.verb == "rename" and bool(files or links)
    plan.left = [] if plan.whole_folder else links  # a renamed folder takes its links along, unfollowed
    taken: set[str] = set()
    for old in files:
        if plan.verb == "merge" and old == f"{plan.src}/{INDEX_NAME}" and _generated(wiki_dir, old):
            plan.drop.append(old)  # derived: the destination's own index lists the moved pages
            continue
        new = plan.dst + old[len(plan.src):]
        if not plan.whole_folder:
            new = _target(wiki_dir, old, new, plan.src, taken)
            if new != plan.dst + old[len(plan.src):]:
                plan.renamed[old] = new
        taken.add(new)
        plan.moves[old] = new
    plan.rewrite, plan.stuck = _carrying(wiki_dir, plan, [*plan.moves, *outside])
    return plan


def plan_pages(wiki_dir: Path, plan: MovePlan, pages: list[str]) -> MovePlan:
    """A session's pages from their project's folder to ``dst``'s (a clash renamed)."""
    taken: set[str] = set()
    for old in pages:
        top, _, rest = old.partition("/")
        if not rest or top == plan.dst:
            continue
        new = _target(wiki_dir, old, f"{plan.dst}/{rest}", top, taken)
        if new != f"{plan.dst}/{rest}":
            plan.renamed[old] = new
        taken.add(new)
        plan.moves[old] = new
    plan.rewrite, plan.stuck = _carrying(wiki_dir, plan, pages)
    return plan


def _carrying(wiki_dir: Path, plan: MovePlan, paths: list[str]) -> tuple[list[str], list[str]]:
    """Of ``paths`` (before the move), the pages whose frontmatter line changes, and those that
    name ``src`` in a line that cannot be changed exactly (a quoted key, another spelling, the key
    twice): both by their paths after the move."""
    found, stuck = [], []
    for rel in paths:
        if not rel.endswith(".md"):
            continue
        text = _text(wiki_dir, rel)
        if text is not None and with_project(text, plan.src, plan.dst) is not None:
            found.append(plan.moves.get(rel, rel))
        elif text is not None and _names_project(text, plan.src):
            stuck.append(plan.moves.get(rel, rel))
    return found, stuck


def _names_project(text: str, project: str) -> bool:
    named = split_frontmatter(text)[0].get("project")
    return isinstance(named, str) and project_name(named) == project


def _text(wiki_dir: Path, rel: str) -> str | None:
    try:
        return read_file(wiki_dir, rel)[0].decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _generated(wiki_dir: Path, rel: str) -> bool:
    try:
        return written_by_us(read_file(wiki_dir, rel)[0], rel)
    except OSError:
        return False


def _rewrite(wiki_dir: Path, rel: str, plan: MovePlan) -> None:
    """The page's project line changed, its mode kept; an editor's save landing meanwhile (the
    file changed between the read and the write) is read again, never written over."""
    for _ in range(3):
        try:
            data, st = read_file(wiki_dir, rel)
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return
        changed = with_project(text, plan.src, plan.dst)
        if changed is None:
            return
        now = lstat_file(wiki_dir, rel)
        if (now.st_ino, now.st_size, now.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns):
            atomic_write(wiki_dir, rel, changed.encode("utf-8"), mode=st.st_mode)
            return


def current_path(wiki_dir: Path, pmap: ProjectMap, rel: str, text: str) -> tuple[str, str]:
    """``(rel, text)``; for a page bound for an old name's folder (its writer chose the name
    before a rename published the map), the page under the project the name means now, its
    project line changed. Never over another page (a clash gets ``-from-OLD``), only over the
    very page it is (the same id, or the same session's summary compiled again)."""
    top, _, rest = rel.partition("/")
    new = pmap.aliases.get(top)
    if new is None or not rest:
        return rel, text
    text = with_project(text, top, new) or text
    wanted = f"{new}/{rest}"
    there = _text(wiki_dir, wanted) if file_kind(wiki_dir, wanted) == "file" else None
    if file_kind(wiki_dir, wanted) != "missing" and (there is None or not _same_page(there, text)):
        wanted = free_name(wiki_dir, wanted, top, set())
    return wanted, text


def _same_page(a: str, b: str) -> bool:
    ours, theirs = split_frontmatter(a)[0], split_frontmatter(b)[0]
    if ours.get("id") is not None:
        return bool(ours.get("id") == theirs.get("id"))
    summary = ours.get("type") == theirs.get("type") == "Session Summary"
    return summary and ours.get("session_id") is not None and ours.get("session_id") == theirs.get("session_id")


def _target(wiki_dir: Path, old: str, wanted: str, src: str, taken: set[str]) -> str:
    """Where ``old`` goes: ``wanted``, or a free name beside it; ``wanted`` itself when it is
    already the same file (a move a crash cut short between its link and its unlink)."""
    if wanted not in taken and same_file(wiki_dir, old, wanted):
        return wanted
    return free_name(wiki_dir, wanted, src, taken)


def free_name(wiki_dir: Path, wanted: str, src: str, taken: set[str]) -> str:
    """``wanted``, or ``<stem>-from-<src>[-N]<ext>`` when a file (or another move) has it."""
    if wanted not in taken and file_kind(wiki_dir, wanted) == "missing":
        return wanted
    folder, _, name = wanted.rpartition("/")
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    for n in range(1, 10_000):
        candidate = f"{folder}/{stem}-from-{src}{'' if n == 1 else f'-{n}'}{dot}{ext}"
        if candidate not in taken and file_kind(wiki_dir, candidate) == "missing":
            return candidate
    raise FileExistsError(wanted)


def carry_out(wiki_dir: Path, plan: MovePlan, message: str) -> str | None:
    """Move the files, change the frontmatter lines, write the projects file, commit once. Runs
    holding the git lock, so no other commit takes part of it: the commit is the atomic step
    (the index follows it, by ``store.projects.apply_map`` and a reconcile). Returns the commit,
    or None when git refused it: everything is written, and the caller has the committer retry."""
    if file_kind(wiki_dir, PROJECTS_FILE) not in ("missing", "file"):  # checked before anything moves
        raise Conflict(f"{PROJECTS_FILE} is not a plain file (a link, a folder)", detail="nothing was moved")
    if plan.whole_folder:
        move_folder(wiki_dir, plan.src, plan.dst)
    else:
        for rel in plan.drop:
            unlink_file(wiki_dir, rel)
        for old, new in list(plan.moves.items()):
            try:
                move_file(wiki_dir, old, new)
            except FileExistsError:  # a file arrived there since the plan: still never overwritten
                new = free_name(wiki_dir, new, old.split("/", 1)[0], set(plan.moves.values()))
                move_file(wiki_dir, old, new)
                plan.moves[old] = plan.renamed[old] = new
            except FileNotFoundError:  # removed since the plan
                plan.moves.pop(old)
        for folder in {old.split("/", 1)[0] for old in plan.moves} if plan.verb == "merge" else ():
            remove_empty_folders(wiki_dir, folder)
    for rel in plan.rewrite:
        _rewrite(wiki_dir, rel, plan)
    atomic_write(wiki_dir, PROJECTS_FILE, render(plan.pmap))
    try:
        return commit_all(wiki_dir, message)
    except (pygit2.GitError, OSError) as exc:
        log.warning("%s: git refused the commit (%s); it is retried", message, exc)
        return None
