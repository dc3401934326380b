"""Committing the wiki to git (pygit2): many page writes in a short window become one commit.

History is never rewritten: we only ever add commits on top of HEAD. The stock git CLI can
read everything we write (``git log``, ``git fsck``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pygit2

from ai_memory.core.clock import utc_from_timestamp
from ai_memory.core.clock import now_iso
from ai_memory.core.errors import StorageError
from ai_memory.heap import IdleTrim, working
from ai_memory.wiki.files import file_kind, is_page_path
from ai_memory.wiki.git_repair import repair
from ai_memory.wiki.repo import opened_repo, signature

log = logging.getLogger(__name__)
TIME_TRAILER = "ai-memory-at"
MAX_BACKOFF_S = 30.0  # the longest wait between two tries of a failing commit
MAX_UNCOMMITTED_WRITES = 50  # page writes that may wait for a failing commit before more get 503
T = TypeVar("T")


def commit_all(wiki_dir: Path, message: str) -> str | None:
    """Stage every change in the work tree (adds, edits, deletions) and commit; None if clean."""
    with opened_repo(wiki_dir) as repo:
        return _commit_changes(repo, wiki_dir, message)


def _commit_changes(repo: pygit2.Repository, wiki_dir: Path, message: str) -> str | None:
    status = repo.status()
    changed = sorted(p for p, flags in status.items() if flags != pygit2.GIT_STATUS_IGNORED)
    if not changed:
        return None
    index = repo.index
    index.read()
    for path in changed:
        kind = file_kind(wiki_dir, path)
        if kind == "file":
            index.add(path)
        elif kind == "missing" and path in index:  # staged already: a crash between index.write and the commit
            index.remove(path)
        # a symlink (at the path or on the way) is never committed: git would read through a
        # linked folder, and a pushed link would become one on every other machine
    index.write()
    tree = index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    if parents and repo[parents[0]].peel(pygit2.Commit).tree_id == tree:
        return None
    sig = signature()
    body = "\n".join(f"- {p}" for p in changed[:200])
    more = f"\n- ... and {len(changed) - 200} more" if len(changed) > 200 else ""
    # git keeps whole seconds; the trailer keeps the moment, for the page history (wiki.history)
    at = now_iso()
    oid = repo.create_commit("HEAD", sig, sig, f"{message}\n\n{body}{more}\n\n{TIME_TRAILER}: {at}\n", tree, parents)
    return str(oid)


def removal_commit(wiki_dir: Path, path: str, depth: int = 200) -> str | None:
    """The newest commit (within ``depth`` of HEAD) whose tree lacks ``path`` while its first
    parent's has it: where a removed page can be restored from (``git show <id>^:<path>``)."""
    with opened_repo(wiki_dir) as repo:
        if repo.head_is_unborn:
            return None
        for count, commit in enumerate(repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL)):
            if count >= depth:
                break
            if commit.parents and path not in commit.tree and path in commit.parents[0].tree:
                return str(commit.id)
        return None


def committed(wiki_dir: Path, files: dict[str, bytes]) -> set[str]:
    """The paths whose bytes are exactly what HEAD holds: only those can leave the work tree
    and still be restored from history."""
    with opened_repo(wiki_dir) as repo:
        if repo.head_is_unborn:
            return set()
        tree = repo[repo.head.target].tree
        return {path for path, data in files.items() if path in tree and tree[path].id == pygit2.hash(data)}


def head_commit(wiki_dir: Path) -> str | None:
    with opened_repo(wiki_dir) as repo:
        return None if repo.head_is_unborn else str(repo.head.target)


def last_commit(wiki_dir: Path) -> dict[str, str] | None:
    """HEAD's short id, time (as stored) and subject line; None before the first commit."""
    with opened_repo(wiki_dir) as repo:
        if repo.head_is_unborn:
            return None
        commit = repo[repo.head.target].peel(pygit2.Commit)
        return {"id": str(commit.id)[:10], "at": utc_from_timestamp(commit.commit_time),
                "subject": commit.message.strip().splitlines()[0] if commit.message.strip() else ""}


def blobs_at(wiki_dir: Path, commit: str, paths: list[str]) -> dict[str, bytes]:
    """The bytes commit ``commit`` holds at each of ``paths`` (a path it lacks is left out)."""
    with opened_repo(wiki_dir) as repo:
        tree = repo[commit].peel(pygit2.Commit).tree
        found = {}
        for path in paths:
            if path in tree and isinstance(obj := tree[path], pygit2.Blob):
                found[path] = obj.data
        return found


class Committer:
    """Collects commit requests and makes one commit per quiet window, off the event loop.

    A commit that fails is retried, with a growing wait (at most ``MAX_BACKOFF_S``), until it
    succeeds: a page write is acknowledged once its file and rows are durable, and it reaches
    git's history as soon as git can take it. After each failure what is safe to repair is
    repaired (``git_repair``). While commits fail, ``describe()`` says so (status, doctor) and,
    past ``MAX_UNCOMMITTED_WRITES`` page writes, ``check_backlog`` refuses more (503).
    """

    def __init__(self, wiki_dir: Path, window_s: float = 0.5, heap: IdleTrim | None = None) -> None:
        self._wiki = wiki_dir
        self._heap = heap  # the daemon's trim, told when a commit (git's whole index) runs
        self._window = window_s
        self._reasons: list[str] = []
        self._event = asyncio.Event()
        self._lock = threading.Lock()  # one git writer at a time (the CLI may commit too)
        self._flushing = asyncio.Lock()  # a flush returns only once what was asked before it is committed
        self._failures = 0
        self.commits = 0
        self.uncommitted_writes = 0  # page writes acknowledged since the last commit that succeeded
        self.failing_since: float | None = None
        self.last_error: str | None = None
        self.repairs: list[str] = []
        # called after each commit made: the page history reads what it changed
        self.on_commit: Callable[[], Awaitable[object]] | None = None

    @property
    def pending(self) -> bool:
        """Whether changes wait for their commit (asked for, not yet made)."""
        return bool(self._reasons)

    def request(self, reason: str) -> None:
        """Ask for a commit soon; reasons within one window share a commit message."""
        if reason not in self._reasons:
            self._reasons.append(reason)
        self._event.set()

    def note_written(self, pages: int) -> None:
        self.uncommitted_writes += pages

    def check_backlog(self) -> None:
        """StorageError (503) while commits fail and too many writes wait for one."""
        if self._failures and self.uncommitted_writes >= MAX_UNCOMMITTED_WRITES:
            raise StorageError("the wiki's git commits keep failing; page writes wait until they succeed",
                               detail=f"{self.uncommitted_writes} writes not committed; last error: {self.last_error}"
                                      " (see ai-memory doctor)")

    def describe(self) -> dict[str, object]:
        since = self.failing_since
        return {"commits": self.commits, "failing": bool(self._failures), "failures": self._failures,
                "failing_since": None if since is None else utc_from_timestamp(since),
                "last_error": self.last_error, "uncommitted_writes": self.uncommitted_writes,
                "repairs": self.repairs[-5:]}

    async def run(self) -> None:
        """The background task: wait for requests, let the window pass (longer after failures), commit."""
        while True:
            await self._event.wait()
            await asyncio.sleep(min(MAX_BACKOFF_S, self._window * 2 ** min(self._failures, 10)))
            await self.flush()

    async def commit_now(self, reason: str) -> str | None:
        """Commit everything waiting now, under ``reason`` among others; the new commit's id
        (None when nothing changed, the commit failed and will be retried, or a concurrent flush
        committed these changes first: ``removal_commit`` then finds it)."""
        self.request(reason)
        return await self.flush()

    async def flush(self) -> str | None:
        async with self._flushing:
            return await self._flush()

    async def _flush(self) -> str | None:
        self._event.clear()
        reasons, self._reasons = self._reasons, []
        if not reasons:
            return None
        message = reasons[0] if len(reasons) == 1 else f"ai-memory: {len(reasons)} changes ({'; '.join(reasons[:5])})"
        try:
            oid = await asyncio.to_thread(self._commit, message)
        except (pygit2.GitError, OSError) as exc:
            # Most often another git process holds .git/index.lock for a moment (a `git status`
            # in the wiki refreshes the index); a lock or index a dead process left is repaired.
            self._failed(exc, reasons)
            return None
        self._failures, self.failing_since, self.last_error, self.uncommitted_writes = 0, None, None, 0
        if oid:
            self.commits += 1
            await self._after_commit()
        return oid

    async def _after_commit(self) -> None:
        if self.on_commit is None:
            return
        try:
            await self.on_commit()
        except Exception:  # the history is derived: the next commit or reconcile reads it again
            log.exception("could not read the page history of the new commit")

    def _failed(self, exc: Exception, reasons: list[str]) -> None:
        self._failures += 1
        self.failing_since = self.failing_since or time.time()
        self.last_error = str(exc)
        self._reasons = reasons + [r for r in self._reasons if r not in reasons]
        log_at = log.warning if self._failures <= 3 else log.error
        log_at("git commit failed %d times (%s); retrying", self._failures, exc)
        self._event.set()

    def _commit(self, message: str) -> str | None:
        # a commit's status reads git's whole index (~17 MB at 100,000 pages): freed, kept by the heap
        with self._lock, working(self._heap):
            try:
                return commit_all(self._wiki, message)
            except (pygit2.GitError, OSError):
                repaired = repair(self._wiki)
                if not repaired:
                    raise
                self.repairs += repaired
                return commit_all(self._wiki, message)

    def exclusively(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on this thread while no commit can start: a sync's merge needs HEAD,
        git's index and the work tree to stand still."""
        with self._lock:
            return fn()


__all__ = ["Committer", "blobs_at", "commit_all", "committed", "head_commit", "is_page_path", "removal_commit"]
