"""The wiki repository and a git remote: fetch and push through the ``git`` command, the merge
in-process through pygit2.

Why both: fetch and push go over ssh or https, and the ``git`` command already knows the user's
ssh config, agent, known hosts and credential helpers (pygit2 would need credential callbacks
and cannot read ``~/.ssh/config``). The merge is ours to decide, file by file, so it runs on
trees in memory: git's own merge would write conflict markers into pages.

The merge is a three-way merge at file granularity over (merge base, ours, theirs):

- a file changed on one side only takes that side (edits, additions and deletions alike);
- a file changed on both sides keeps ours at its path and writes theirs beside it as
  ``<name>.conflict-<their commit>-<UTC time>.md`` (lint reports it): never a lost edit,
  never markers inside a page;
- a deletion against an edit keeps the edit;
- a generated ``index.md`` keeps ours: it is rewritten from the index right after. Theirs is
  dropped only when it too is a generated one (derived, nothing to lose); a hand-written
  ``index.md`` is a page like any other and becomes a conflict copy, never overwritten;
- the projects file changed on both sides (each machine renamed or merged a project) holds
  both maps (``ProjectMap.joined``: ours wins a name both give), never a conflict copy.

History is only ever added to: a merge commit with both parents, or a fast-forward when ours
is already in theirs. Nothing is force-pushed (no ``+`` in any push refspec, no ``--force``).

The remote is not trusted. git's fsck checks every object fetched (``gitcli.HARDENED``), and
before anything is written every path of their tree must be a plain file at a wiki path: no
``..``, no absolute path, nothing under ``.git``, no symlink (mode 120000) and no submodule
(160000). One bad entry refuses the whole merge and nothing is written.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from dataclasses import dataclass, field
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pygit2

from ai_memory.core.errors import SyncError
from ai_memory.core.project_map import PROJECTS_FILE, parse, render
from ai_memory.wiki.files import GENERATED, atomic_write, lstat_file, read_file, unlink_file, unsafe_part
from ai_memory.wiki.git import commit_all
from ai_memory.wiki.gitcli import HARDENED, check_remote
from ai_memory.wiki.project_index import written_by_us
from ai_memory.wiki.repo import ensure_repo, signature

TRACKING_REF = "refs/remotes/ai-memory-sync/{branch}"
Entry = tuple[pygit2.Oid, pygit2.enums.FileMode]  # (blob id, file mode)


@dataclass
class MergeOutcome:
    """What one merge did to HEAD and to the work tree."""

    head: str                                            # HEAD after the merge
    kind: str = "up-to-date"                             # "up-to-date", "fast-forward" or "merge"
    written: list[str] = field(default_factory=list)     # files created or changed in the work tree
    removed: dict[str, bytes] = field(default_factory=dict)  # files removed, with the bytes they had
    conflicts: list[str] = field(default_factory=list)   # conflict copies written


class WorkTreeRaced(Exception):
    """A file changed between our commit and the merge's write: merge again from a new commit."""


# -- the git command: fetch and push ---------------------------------------------------------

def _git(wiki_dir: Path, args: list[str], timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Run git on the wiki's repository, in its own session: no terminal to prompt on (a
    password prompt would hang a daemon), and on timeout the whole group (ssh too) is killed."""
    cmd = ["git", *HARDENED, f"--git-dir={wiki_dir / '.git'}", *args]
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
    except OSError as exc:
        raise SyncError("the git command is needed to sync the wiki", detail=str(exc)) from exc
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise SyncError(f"git {args[0]} took longer than {timeout_s:.0f} s", detail="see sync.timeout_s") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def fetch(wiki_dir: Path, url: str, branch: str, timeout_s: float) -> str | None:
    """Fetch the remote branch into our tracking ref; its commit id, or None when the remote
    has no such branch yet (a new, empty remote)."""
    ref = TRACKING_REF.format(branch=branch)
    url = check_remote(url)
    # '+' only on our own tracking ref: it mirrors the remote, our branch is never touched here
    done = _git(wiki_dir, ["fetch", "--quiet", "--no-tags", "--", url, f"+refs/heads/{branch}:{ref}"], timeout_s)
    if done.returncode != 0:
        if "couldn't find remote ref" in done.stderr:
            return None
        raise SyncError(f"git fetch from {url} failed", detail=done.stderr.strip()[-400:])
    return str(ensure_repo(wiki_dir).references[ref].target)


def push(wiki_dir: Path, url: str, branch: str, commit: str, timeout_s: float) -> bool:
    """Push ``commit`` to the remote branch, never forced. False when the remote refused it
    because it moved on meanwhile (fetch and merge again); other failures raise."""
    done = _git(wiki_dir, ["push", "--porcelain", "--", check_remote(url), f"{commit}:refs/heads/{branch}"],
                timeout_s)
    if done.returncode == 0:
        return True
    text = done.stdout + done.stderr
    if "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text or "cannot lock ref" in text:
        return False
    raise SyncError(f"git push to {url} failed", detail=text.strip()[-400:])


# -- the merge -------------------------------------------------------------------------------

def commit_and_merge(wiki_dir: Path, theirs: str | None, now: datetime | None = None) -> MergeOutcome:
    """Commit local changes, then merge ``theirs`` into HEAD and the work tree.

    The caller holds the Committer's lock, so no other commit starts meanwhile; a page file
    written between our commit and the merge's writes is caught (WorkTreeRaced) and the
    caller commits and merges again.
    """
    commit_all(wiki_dir, "sync: local changes before merging")
    repo = ensure_repo(wiki_dir)
    ours = repo.head.peel(pygit2.Commit)
    if theirs is None:
        return MergeOutcome(head=str(ours.id))
    other: object = repo.get(theirs)  # pygit2's stubs do not make Commit an Object: narrowed below
    if not isinstance(other, pygit2.Commit):
        raise SyncError("the fetched remote head is not a commit", detail=theirs)
    if ours.id == other.id or repo.descendant_of(ours.id, other.id):
        return MergeOutcome(head=str(ours.id))
    base_id = repo.merge_base(ours.id, other.id)
    base = _flatten(repo, repo[base_id].tree) if base_id else {}
    mine, their = _flatten(repo, ours.tree), _flatten(repo, other.tree)
    for path, (_, mode) in their.items():
        check_entry(path, mode)  # before anything is written: one bad entry refuses the merge
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%d-%H%M%S")
    merged, conflicts = merge_files(base, mine, their, f"{str(other.id)[:8]}-{stamp}",
                                    derived=lambda path, entry: path == PROJECTS_FILE or _generated(repo, path, entry))
    _join_projects_file(repo, base, mine, their, merged)
    outcome = _apply(repo, wiki_dir, mine, merged)
    outcome.conflicts = conflicts
    fast_forward = base_id == ours.id and merged == their
    outcome.kind = "fast-forward" if fast_forward else "merge"
    outcome.head = _advance(repo, ours, other, merged, conflicts, fast_forward)
    return outcome


def merge_files(base: dict[str, Entry], ours: dict[str, Entry], theirs: dict[str, Entry], label: str,
                derived: Callable[[str, Entry], bool] = lambda path, entry: False,
                ) -> tuple[dict[str, Entry], list[str]]:
    """The merged file set, and the conflict copies it holds (pure: no repository needed).

    ``derived(path, entry)`` says whether a file is one ai-memory regenerates (a generated
    index): theirs of such a file needs no conflict copy when both sides changed it."""
    merged: dict[str, Entry] = {}
    copies: list[str] = []
    for path in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        if o == t or t == b:
            chosen = o
        elif o == b:
            chosen = t
        elif o is None or t is None:  # deleted on one side, edited on the other: the edit stays
            chosen = o or t
        else:
            chosen = o
            if not derived(path, t):  # a generated index is rebuilt from the index; anything else is kept
                copy = _free_name(conflict_name(path, label), ours, theirs, merged)
                merged[copy] = t
                copies.append(copy)
        if chosen is not None:
            merged[path] = chosen
    return merged, copies


def _join_projects_file(repo: pygit2.Repository, base: dict[str, Entry], ours: dict[str, Entry],
                        theirs: dict[str, Entry], merged: dict[str, Entry]) -> None:
    """Both sides changed the projects file (each renamed or merged a project): the merge holds
    both maps, never one side's with the other's old names lost in a conflict copy."""
    b, o, t = (side.get(PROJECTS_FILE) for side in (base, ours, theirs))
    if o is None or t is None or o == t or b in (o, t):
        return
    joined = parse(repo[o[0]].peel(pygit2.Blob).data)[0].joined(parse(repo[t[0]].peel(pygit2.Blob).data)[0])
    merged[PROJECTS_FILE] = (repo.create_blob(render(joined)), o[1])


def _generated(repo: pygit2.Repository, path: str, entry: Entry) -> bool:
    """Whether a file of a tree is an index.md ai-memory generated (its frontmatter says so)."""
    return path.rsplit("/", 1)[-1] in GENERATED and written_by_us(repo[entry[0]].peel(pygit2.Blob).data, path)


def conflict_name(path: str, label: str) -> str:
    """``notes/x.md`` → ``notes/x.conflict-<label>.md`` (the pattern lint reports)."""
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    copy = f"{stem}.conflict-{label}.{ext}" if dot and stem else f"{name}.conflict-{label}"
    return f"{folder}/{copy}" if folder else copy


def _free_name(name: str, *taken: dict[str, Entry]) -> str:
    candidate, n = name, 1
    while any(candidate in t for t in taken):
        n += 1
        head, dot, ext = name.rpartition(".")
        candidate = f"{head}-{n}.{ext}" if dot else f"{name}-{n}"
    return candidate


SAFE_MODES = frozenset({pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE})


def check_entry(path: str, mode: int) -> None:
    """SyncError unless ``path`` is a plain file at a path inside the wiki, outside ``.git``."""
    if mode not in SAFE_MODES:
        kind = {pygit2.GIT_FILEMODE_LINK: "a symlink", pygit2.GIT_FILEMODE_COMMIT: "a submodule"}.get(mode, "no file")
        raise SyncError(f"the remote's tree holds {kind}; nothing was merged", detail=f"{path!r} (mode {mode:o})")
    bad = unsafe_part(path)
    if bad is not None:
        raise SyncError("the remote's tree holds a path outside the wiki; nothing was merged",
                        detail=f"{path!r}: {bad}")


def _flatten(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> dict[str, Entry]:
    """Every file of a tree by its path (sub-trees walked, not listed)."""
    files: dict[str, Entry] = {}
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            files.update(_flatten(repo, repo[entry.id].peel(pygit2.Tree), f"{path}/"))
        else:
            files[path] = (entry.id, entry.filemode)
    return files


def _apply(repo: pygit2.Repository, wiki_dir: Path, ours: dict[str, Entry],
           merged: dict[str, Entry]) -> MergeOutcome:
    """Bring the work tree from ``ours`` (just committed) to ``merged``: check every file to be
    touched still holds what we committed, then write or remove each."""
    changed = sorted(p for p in set(ours) | set(merged) if ours.get(p) != merged.get(p))
    for path in changed:
        if _disk_id(wiki_dir, path) != (ours[path][0] if path in ours else None):
            raise WorkTreeRaced(path)
    outcome = MergeOutcome(head="")
    for path in changed:
        # again just before replacing it: a page written meanwhile must not be overwritten
        if _disk_id(wiki_dir, path) != (ours[path][0] if path in ours else None):
            raise WorkTreeRaced(path)
        if path in merged:
            atomic_write(wiki_dir, path, repo[merged[path][0]].peel(pygit2.Blob).data)
            outcome.written.append(path)
        else:
            outcome.removed[path] = repo[ours[path][0]].peel(pygit2.Blob).data
            try:
                unlink_file(wiki_dir, path)
            except FileNotFoundError:
                pass
            _prune_empty_dirs(wiki_dir, path)
    return outcome


def _disk_id(wiki_dir: Path, rel: str) -> pygit2.Oid | None:
    try:
        return pygit2.hash(read_file(wiki_dir, rel)[0])
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SyncError("cannot read a wiki file before merging", detail=f"{rel}: {exc}") from exc


def _prune_empty_dirs(wiki_dir: Path, rel: str) -> None:
    """Remove the folders of ``rel`` that are now empty, deepest first (never a linked one)."""
    parts = rel.split("/")[:-1]
    while parts:
        folder = "/".join(parts)
        try:
            if not stat.S_ISDIR(lstat_file(wiki_dir, folder).st_mode) or any((wiki_dir / folder).iterdir()):
                return
            os.rmdir(wiki_dir / folder)
        except OSError:
            return
        parts.pop()


def _advance(repo: pygit2.Repository, ours: pygit2.Commit, theirs: pygit2.Commit,
             merged: dict[str, Entry], conflicts: list[str], fast_forward: bool) -> str:
    """Move HEAD (a merge commit with both parents, or a fast-forward) and set git's index to
    the new tree, so the next commit_all sees only later changes."""
    if fast_forward:
        repo.references[repo.head.name].set_target(theirs.id, "sync: fast-forward")
        tree_id = theirs.tree_id
        head = theirs.id
    else:
        index = pygit2.Index()
        for path, (oid, mode) in merged.items():
            index.add(pygit2.IndexEntry(path, oid, mode))
        tree_id = index.write_tree(repo)
        sig = signature()
        note = "".join(f"\n- conflict copy: {c}" for c in conflicts)
        message = f"sync: merge {str(theirs.id)[:12]} from the remote\n{note}\n"
        head = repo.create_commit("HEAD", sig, sig, message, tree_id, [ours.id, theirs.id])
    repo.index.read_tree(repo[tree_id])
    repo.index.write()
    return str(head)
