"""What stops the wiki's commits, and its repair where that is safe.

Two things make every commit fail until someone acts: a lock file left by a git process that
died (a crash, a kill -9, a full disk): ``index.lock``, or a ref's (``HEAD.lock``,
``refs/heads/main.lock``, ``packed-refs.lock``: a commit killed while it moved the branch), and
an index file that cannot be read. Both are repaired here, and only when it is safe:

- a lock is removed only once no process holds it open (a live git keeps its lock file open
  from creation until it closes it just before the rename, microseconds later) and it is
  ``STALE_LOCK_S`` old;
- git's index is derived (HEAD plus what was staged); an unreadable one is moved aside and
  rebuilt from HEAD, after which every change in the work tree shows again and is committed.
"""

from __future__ import annotations

import logging
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pygit2

log = logging.getLogger(__name__)
STALE_LOCK_S = 2.0


def _held_open(path: Path) -> bool:
    """True when a process we can see has ``path`` open (Linux /proc; elsewhere: assume so)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    target = str(path)
    for pid in (p for p in proc.iterdir() if p.name.isdigit()):
        try:
            fds = list((pid / "fd").iterdir())
        except OSError:  # gone, or another user's (who cannot write our 0700 data dir)
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == target:
                    return True
            except OSError:
                continue
    return False


def stale_lock(wiki_dir: Path, now: float | None = None) -> Path | None:
    """The first of the wiki's git lock files that is left over (old, and no process holds it)."""
    return next(iter(stale_locks(wiki_dir, now)), None)


def stale_locks(wiki_dir: Path, now: float | None = None, stale_after: float = STALE_LOCK_S) -> list[Path]:
    """The wiki's git lock files that are left over: ``stale_after`` seconds old, and held open
    by no process."""
    git_dir = wiki_dir / ".git"
    found = []
    for lock in _lock_files(git_dir):
        try:
            age = (now or time.time()) - lock.lstat().st_mtime
        except FileNotFoundError:
            continue
        if age >= stale_after and not _held_open(lock):
            found.append(lock)
    return found


def lock_files(wiki_dir: Path) -> list[Path]:
    """Every lock file in the wiki's git directory now (a commit's, or another git's)."""
    return _lock_files(wiki_dir / ".git")


def _lock_files(git_dir: Path) -> list[Path]:
    found = [git_dir / name for name in ("index.lock", "HEAD.lock", "packed-refs.lock") if (git_dir / name).exists()]
    refs = git_dir / "refs"
    if refs.is_dir():
        found += sorted(p for p in refs.rglob("*.lock") if not p.is_symlink())
    return found


def index_readable(wiki_dir: Path) -> bool:
    try:
        pygit2.Repository(str(wiki_dir)).index.read(force=True)
    except pygit2.GitError:
        return False
    return True


def repair(wiki_dir: Path, stale_after: float = STALE_LOCK_S) -> list[str]:
    """Repair what is safe to repair; what was done, one line each (empty: nothing was).
    ``stale_after``: how old a lock no process holds must be to go (0: a caller that holds
    the wiki's git lock and finishes what a crash cut short, before anything else commits)."""
    done = []
    for lock in stale_locks(wiki_dir, stale_after=stale_after):
        lock.unlink(missing_ok=True)
        done.append(f"removed a stale {lock.relative_to(wiki_dir / '.git')} (no process held it)")
    if not index_readable(wiki_dir):
        done.append(_rebuild_index(wiki_dir))
    for line in done:
        log.warning("wiki git: %s", line)
    return done


def _rebuild_index(wiki_dir: Path) -> str:
    index = wiki_dir / ".git" / "index"
    aside = index.with_name(f"index.unreadable-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S')}")
    os.replace(index, aside)
    repo = pygit2.Repository(str(wiki_dir))
    if not repo.head_is_unborn:
        repo.index.read_tree(repo.head.peel(pygit2.Commit).tree)
    repo.index.write()
    return f"rebuilt the unreadable index from HEAD (the old one is {aside.name})"
