"""Syncing the wiki with a git remote, and the index following what arrived.

One round: commit what is waiting, fetch, merge (``gitsync``: conflicts become conflict copies,
never markers), bring the index in step with every file the merge wrote or removed (a removed
page leaves a "synced deletion" tombstone), commit the regenerated project indexes, push. A
push the remote refuses because it moved on meanwhile means another round: fetch and merge
again, never force; after ``MAX_ROUNDS`` the sync fails and the next one starts over.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import pygit2

from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.core.errors import SyncError
from ai_memory.core.page import parse_page
from ai_memory.store.forgetting import bury_pages
from ai_memory.wiki.files import is_page_path
from ai_memory.wiki.git import removal_commit
from ai_memory.wiki.gitcli import check_remote
from ai_memory.wiki.gitsync import MergeOutcome, WorkTreeRaced, commit_and_merge, fetch, push
from ai_memory.wiki.offline import offline_wiki
from ai_memory.wiki.projects import ProjectLifecycle
from ai_memory.wiki.repo import ensure_repo
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)
MAX_ROUNDS = 5   # pushes refused because another machine pushed first
MAX_RACES = 3    # merges redone because a page was written mid-merge
SYNCED_DELETION = "synced deletion"
_USERINFO = re.compile(r"://[^/@\s]+@")  # a remote's user and password, never shown in status


@dataclass
class SyncReport:
    """What a sync did, summed over its rounds."""

    remote: str
    branch: str
    head: str = ""
    remote_head: str | None = None
    pushed: bool = False
    rounds: int = 0
    merges: list[str] = field(default_factory=list)   # "merge" / "fast-forward" per round that merged
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class Syncer:
    """Pulls from and pushes to one git remote; one sync at a time."""

    def __init__(self, wiki: Wiki, remote: str, branch: str, timeout_s: float) -> None:
        self.wiki = wiki
        self.remote = remote.strip()
        self.branch = branch
        self.timeout_s = timeout_s
        self.last: dict[str, Any] | None = None  # the latest sync's end: at, ok, and pushed or error
        self._lock = asyncio.Lock()

    async def sync(self, remote: str | None = None) -> SyncReport:
        """One sync; ``last`` then says when it ended and how (status shows it)."""
        try:
            report = await self._sync(remote)
        except Exception as exc:
            self.last = {"at": now_iso(), "ok": False, "error": _USERINFO.sub("://", str(exc))[:300]}
            raise
        self.last = {"at": now_iso(), "ok": True, "pushed": report.pushed, "conflicts": len(report.conflicts)}
        return report

    async def _sync(self, remote: str | None) -> SyncReport:
        # the caller's to fix (config or argument), not the remote's: a 400, not a 502
        url = check_remote(remote or self.remote)
        async with self._lock:
            report = SyncReport(url, self.branch)
            for report.rounds in range(1, MAX_ROUNDS + 1):
                if await self._round(url, report):
                    return report
                log.info("sync: %s refused the push (it moved on); fetching and merging again", url)
            raise SyncError(f"{url} kept refusing the push after {MAX_ROUNDS} merges",
                            detail="another machine pushes continually; the next sync tries again")

    async def _round(self, url: str, report: SyncReport) -> bool:
        """Fetch, merge, follow, push; True when the remote holds our HEAD afterwards."""
        await self.wiki.committer.flush()
        theirs = await asyncio.to_thread(fetch, self.wiki.dir, url, self.branch, self.timeout_s)
        report.remote_head = theirs
        outcome = await asyncio.to_thread(self._merge, theirs)
        if outcome.kind != "up-to-date":
            report.merges.append(outcome.kind)
            await self._follow(outcome, report)
        await self.wiki.committer.flush()  # the project indexes rewritten after the merge travel too
        report.head = await asyncio.to_thread(_head, self.wiki)
        if report.head == theirs:
            return True
        if not await asyncio.to_thread(push, self.wiki.dir, url, self.branch, report.head, self.timeout_s):
            return False
        report.pushed, report.remote_head = True, report.head
        return True

    def _merge(self, theirs: str | None) -> MergeOutcome:
        """Commit and merge with no other commit starting meanwhile; redo on a mid-merge write."""
        raced: WorkTreeRaced | None = None
        for _ in range(MAX_RACES):
            try:
                return self.wiki.committer.exclusively(lambda: commit_and_merge(self.wiki.dir, theirs))
            except WorkTreeRaced as exc:
                raced = exc
            except pygit2.GitError as exc:
                raise SyncError("the merge with the remote failed", detail=str(exc)) from exc
        raise SyncError("pages kept changing during the merge", detail=f"last: {raced}")

    async def _follow(self, outcome: MergeOutcome, report: SyncReport) -> None:
        """The index follows the files: arrivals are indexed, deletions leave tombstones."""
        when = now_iso()
        for rel, data in outcome.removed.items():
            if not is_page_path(rel):
                continue
            # where `git show <commit>^:<path>` restores it: our merge, or the remote's own removal
            commit = outcome.head if outcome.kind == "merge" else await asyncio.to_thread(
                removal_commit, self.wiki.dir, rel)
            await self.wiki.writer.submit_wait(bury_pages([parse_page(rel, data)], SYNCED_DELETION, when, commit))
        for rel in outcome.written:
            await self.wiki.sync_path(rel)
        touched = [*outcome.written, *outcome.removed]
        await self.wiki.refresh_indexes({rel.split("/", 1)[0] for rel in touched if "/" in rel})
        self.wiki.committer.request("sync: project indexes after merging")
        report.written += outcome.written
        report.removed += list(outcome.removed)
        report.conflicts += outcome.conflicts
        log.info("sync: %s; %d files written, %d removed, %d conflict copies", outcome.kind,
                 len(outcome.written), len(outcome.removed), len(outcome.conflicts))


def _head(wiki: Wiki) -> str:
    return str(ensure_repo(wiki.dir).head.target)


def syncer_for(wiki: Wiki, config: Config) -> Syncer:
    """The Syncer the sync.* keys describe (its remote may be empty: sync on request only)."""
    return Syncer(wiki, config.sync.remote, config.sync.branch, config.sync.timeout_s)


async def sync_offline(config: Config, remote: str | None = None) -> SyncReport:
    """Sync a data dir no daemon serves (the caller holds its serve lock): this process is the
    one writer for the duration. The index is reconciled first, so it follows every file."""
    async with offline_wiki(config) as wiki:
        report = await syncer_for(wiki, config).sync(remote)
        await ProjectLifecycle(wiki).load()  # old names the other machine gave arrive with its files
        return report
