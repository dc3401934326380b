"""Checking the wiki's git repository for damage (missing or corrupt objects, broken refs).

pygit2 (libgit2) has no fsck. With the git CLI installed, ``git fsck --full`` is the reference
check and is used; without it, every object reachable from every ref is read through pygit2,
which inflates each one and verifies its hash (libgit2's strict hash verification is on by
default): that catches missing and corrupt objects, though not git's finer format warnings.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ai_memory.wiki.gitcli import HARDENED

FSCK_TIMEOUT_S = 300.0
MAX_PROBLEMS = 20


@dataclass(frozen=True)
class FsckResult:
    ok: bool
    method: str  # "git fsck" or "pygit2 walk"
    problems: list[str]
    objects: int = 0  # objects read by the pygit2 walk (0 for git fsck)


def fsck(wiki_dir: Path, *, prefer_git: bool = True) -> FsckResult:
    """Check the repository; never raises for a damaged one (the damage is the result).

    ``prefer_git=False`` forces the pygit2 walk (what a machine without git gets).
    """
    if not (wiki_dir / ".git").exists():
        return FsckResult(False, "none", [f"{wiki_dir} is not a git repository"])
    git = shutil.which("git") if prefer_git else None
    return _git_fsck(git, wiki_dir) if git else _walk(wiki_dir)


def _git_fsck(git: str, wiki_dir: Path) -> FsckResult:
    # --no-dangling: objects left by an interrupted write are harmless, not damage.
    try:
        done = subprocess.run([git, *HARDENED, "-C", str(wiki_dir), "fsck", "--full", "--no-dangling", "--no-progress"],
                              capture_output=True, text=True, timeout=FSCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return FsckResult(False, "git fsck", [f"git fsck did not finish within {FSCK_TIMEOUT_S:.0f} s"])
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    problems = [ln for ln in lines if not ln.startswith(("Checking", "notice:"))]
    if done.returncode != 0 and not problems:
        problems = [f"git fsck exited with {done.returncode}"]
    return FsckResult(done.returncode == 0 and not problems, "git fsck", problems[:MAX_PROBLEMS])


def _walk(wiki_dir: Path) -> FsckResult:
    problems: list[str] = []
    seen: set[str] = set()
    try:
        repo = pygit2.Repository(str(wiki_dir))
        heads = [ref.peel().id for ref in (repo.references[name] for name in repo.references)]
    except (pygit2.GitError, KeyError, ValueError) as exc:
        return FsckResult(False, "pygit2 walk", [f"cannot read the references: {exc}"])
    for head in heads:
        try:
            for commit in repo.walk(head, pygit2.enums.SortMode.NONE):
                if str(commit.id) not in seen:
                    seen.add(str(commit.id))
                    _tree(repo, commit.tree_id, seen, problems)
        except (pygit2.GitError, KeyError, ValueError) as exc:
            problems.append(f"history from {head}: {exc}")
        if len(problems) >= MAX_PROBLEMS:
            break
    return FsckResult(not problems, "pygit2 walk", problems[:MAX_PROBLEMS], len(seen))


def _tree(repo: pygit2.Repository, oid: pygit2.Oid, seen: set[str], problems: list[str]) -> None:
    """Read a tree and everything under it once (reading an object verifies it)."""
    stack = [oid]
    while stack and len(problems) < MAX_PROBLEMS:
        current = stack.pop()
        if str(current) in seen:
            continue
        seen.add(str(current))
        try:
            obj = repo[current]
        except (pygit2.GitError, KeyError, ValueError) as exc:
            problems.append(f"object {current}: {exc}")
            continue
        if isinstance(obj, pygit2.Tree):
            stack += [entry.id for entry in obj if entry.filemode != pygit2.GIT_FILEMODE_COMMIT]
        else:
            obj.read_raw()  # a blob's content: inflated and hash-checked
