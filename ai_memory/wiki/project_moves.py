"""The file side of a project's lifecycle: which wiki files move where, and moving them in one
git commit together with the projects file.

Files are the user's: a page moves with its folder whatever it holds, but only a page whose
frontmatter carries ``project: <old>`` (every page ai-memory writes does) has that one line
changed (``core.page.with_project``); nothing is ever moved over an existing file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pygit2

from ai_memory.core.errors import Conflict
from ai_memory.core.names import project_name
from ai_memory.core.page import split_frontmatter, with_project
from ai_memory.core.project_map import MAX_BYTES, PROJECTS_FILE, ProjectMap, parse, render
from ai_memory.wiki import lifecycle_intent
from ai_memory.wiki.files import (
    atomic_write, file_kind, folder_files, lstat_file, move_file, move_folder, read_file, remove_empty_folders,
    same_file, unlink_file,
)
from ai_memory.wiki.git import commit_all
from ai_memory.wiki.lifecycle_intent import Intent, MovePlan
from ai_memory.wiki.project_index import INDEX_NAME, written_by_us

log = logging.getLogger(__name__)


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
    """``(rel, text)``; for a page bound for a folder its project no longer has (its writer chose
    it before a rename, a merge or a session's move published the map), the page under the
    project that holds it now, its project line changed. Never over another page (a clash gets
    ``-from-OLD``), only over the very page it is (the same id, or the same session's summary
    compiled again)."""
    top, _, rest = rel.partition("/")
    new = pmap.aliases.get(top) or _moved_session_project(pmap, text, top)
    if new is None or not rest:
        return rel, text
    text = with_project(text, top, new) or text
    wanted = f"{new}/{rest}"
    there = _text(wiki_dir, wanted) if file_kind(wiki_dir, wanted) == "file" else None
    if file_kind(wiki_dir, wanted) != "missing" and (there is None or not _same_page(there, text)):
        wanted = free_name(wiki_dir, wanted, top, set())
    return wanted, text


def _moved_session_project(pmap: ProjectMap, text: str, folder: str) -> str | None:
    """The project a session's page belongs in when its session was moved away from ``folder``."""
    if not pmap.sessions or "session_id:" not in text:
        return None
    session = split_frontmatter(text)[0].get("session_id")
    moved = pmap.sessions.get(str(session)) if session is not None else None
    return moved if moved is not None and moved != folder else None


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
    """Record the intent, move the files, change the frontmatter lines, write the projects file,
    commit once. Runs holding the git lock, so no other commit takes part of it: the commit is the
    atomic step (the index follows it, by ``store.projects.apply_map`` and a reconcile), and the
    intent, which the caller clears once the rows moved too, lets the next start finish a verb a
    crash cut short. Returns the commit, or None when git refused it: everything is written, and
    the caller has the committer retry."""
    if file_kind(wiki_dir, PROJECTS_FILE) not in ("missing", "file"):  # checked before anything moves
        raise Conflict(f"{PROJECTS_FILE} is not a plain file (a link, a folder)", detail="nothing was moved")
    intent = Intent(message, move=plan)
    lifecycle_intent.record(wiki_dir, intent)
    return _apply(wiki_dir, plan, message, lambda: lifecycle_intent.record(wiki_dir, intent), resuming=False)


def finish_move(wiki_dir: Path, plan: MovePlan, message: str) -> str | None:
    """Carry out a recorded plan again, from the top, after a crash: each step is skipped where
    it was done (a file already at its new path, a line already changed)."""
    return _apply(wiki_dir, plan, message, lambda: lifecycle_intent.record(wiki_dir, Intent(message, move=plan)),
                  resuming=True)


def _apply(wiki_dir: Path, plan: MovePlan, message: str, replanned: Callable[[], None], resuming: bool) -> str | None:
    if plan.whole_folder:
        if file_kind(wiki_dir, plan.dst) == "missing" and file_kind(wiki_dir, plan.src) == "other":
            move_folder(wiki_dir, plan.src, plan.dst)
    else:
        for rel in plan.drop:
            _unlink_if_there(wiki_dir, rel)
        for old, new in list(plan.moves.items()):
            _move_one(wiki_dir, plan, old, new, replanned, resuming)
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


def _move_one(wiki_dir: Path, plan: MovePlan, old: str, new: str, replanned: Callable[[], None],
              resuming: bool) -> None:
    """One file to its new path, never over another file: a file that arrived there since the
    plan sends this one to a free name beside it (recorded in the intent before it moves)."""
    try:
        move_file(wiki_dir, old, new)
        return
    except FileNotFoundError:  # moved before a crash, or removed since the plan
        if file_kind(wiki_dir, old) != "missing":
            raise
        if not resuming or file_kind(wiki_dir, new) == "missing":
            del plan.moves[old]
        return
    except FileExistsError:
        if resuming and _copy_cut_short(wiki_dir, old, new):
            unlink_file(wiki_dir, new)
            move_file(wiki_dir, old, new)
            return
        if resuming and _same_bytes(wiki_dir, old, new):  # a copy made before a crash, its unlink not
            unlink_file(wiki_dir, old)
            return
    plan.moves[old] = plan.renamed[old] = free_name(wiki_dir, new, old.split("/", 1)[0], set(plan.moves.values()))
    replanned()
    move_file(wiki_dir, old, plan.moves[old])


def _same_bytes(wiki_dir: Path, a: str, b: str) -> bool:
    try:
        return read_file(wiki_dir, a)[0] == read_file(wiki_dir, b)[0]
    except OSError:
        return False


def _copy_cut_short(wiki_dir: Path, old: str, new: str) -> bool:
    """Where the file system has no hard links a move copies: a crash mid-copy leaves the start
    of the file at its new path (a path the plan found free)."""
    try:
        there, here = read_file(wiki_dir, new)[0], read_file(wiki_dir, old)[0]
    except OSError:
        return False
    return len(there) < len(here) and here.startswith(there)


def _unlink_if_there(wiki_dir: Path, rel: str) -> None:
    try:
        unlink_file(wiki_dir, rel)
    except FileNotFoundError:
        pass
