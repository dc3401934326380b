"""The forget sweep: remove cold episodic pages and expired pages, leaving tombstones.

One function decides (``core.retention.judge``) and one plan feeds both runs: the dry run
returns the plan, the real run carries it out and returns the same list. A removed page's file
leaves the work tree in a git commit (so ``git show <commit>^:<path>`` restores it), its index
rows go, and a tombstone row says what it was, why it went and which commit holds it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ai_memory.config import Config
from ai_memory.core.clock import utc_iso
from ai_memory.core.page import content_hash
from ai_memory.core.retention import RetentionParams, Verdict, judge
from ai_memory.store import forgetting as rows
from ai_memory.store.reader import Reader
from ai_memory.wiki.files import is_page_path, unlink_file
from ai_memory.wiki.git import committed, removal_commit
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Removal:
    """One page the sweep removes (or, in a dry run, would remove)."""

    candidate: rows.Candidate
    verdict: Verdict

    def as_json(self) -> dict[str, Any]:
        c, v = self.candidate, self.verdict
        return {"path": c.facts.path, "project": c.project, "type": c.type, "title": c.title,
                "tier": c.facts.tier, "reason": v.reason,
                "retention": None if v.retention is None else round(v.retention, 4),
                "age_days": round(v.age_days, 1), "access_count": c.facts.access_count,
                "salience": c.facts.salience}


@dataclass
class SweepReport:
    dry_run: bool
    now: datetime
    params: RetentionParams
    removed: list[Removal] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # changed on disk since the plan: judged next time
    purged: list[str] = field(default_factory=list)
    git_commit: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "now": utc_iso(self.now),
                "removed": [r.as_json() for r in self.removed], "skipped": self.skipped,
                "purged_tombstones": self.purged, "git_commit": self.git_commit,
                "params": {"lambda": self.params.lam, "sigma": self.params.sigma, "mu": self.params.mu,
                           "cold_threshold": self.params.cold_threshold, "purge_days": self.params.purge_days}}


def retention_params(config: Config) -> RetentionParams:
    forget = config.forget
    return RetentionParams(lam=forget.lambda_, sigma=forget.sigma, mu=forget.mu,
                           cold_threshold=forget.cold_threshold, purge_days=forget.purge_days)


async def tombstones(reader: Reader, project: str | None, limit: int) -> list[dict[str, Any]]:
    """Pages the sweep removed (of a project, or of all), newest first, with the commit that holds them."""
    return await reader.run(lambda c: rows.list_tombstones(c, project, limit))


class Forgetter:
    """Plans and carries out sweeps over one wiki. Callers serialize sweeps (the runtime's
    maintenance lock), so a plan is never carried out twice."""

    def __init__(self, wiki: Wiki, params: RetentionParams) -> None:
        self.wiki = wiki
        self.params = params

    async def sweep(self, dry_run: bool = False, now: datetime | None = None) -> SweepReport:
        moment = now or datetime.now(timezone.utc)
        report = SweepReport(dry_run, moment, self.params)
        report.removed = await self.plan(moment)
        cutoff = utc_iso(moment - timedelta(days=self.params.purge_days))
        report.purged = await self.wiki.reader.run(lambda c: rows.expired_tombstones(c, cutoff))
        if dry_run:
            return report
        await self._carry_out(report)
        if report.purged:
            await self.wiki.writer.submit_wait(rows.purge(report.purged))
        if report.removed or report.purged:
            log.info("forget sweep: %d removed, %d skipped, %d tombstones purged",
                     len(report.removed), len(report.skipped), len(report.purged))
        return report

    async def plan(self, now: datetime) -> list[Removal]:
        """Every page the rules remove at ``now``, by path."""
        found = await self.wiki.reader.run(rows.candidates)
        plan = []
        for cand in found:
            verdict = judge(cand.facts, now, self.params)
            if verdict is not None and is_page_path(cand.facts.path):
                plan.append(Removal(cand, verdict))
        return plan

    async def _carry_out(self, report: SweepReport) -> None:
        await self.wiki.committer.flush()  # a page written moments ago must reach history before it leaves
        gone = set(await asyncio.to_thread(self._unlink_safely, report.removed))
        report.skipped = [r.candidate.facts.path for r in report.removed if r.candidate.facts.path not in gone]
        report.removed = [r for r in report.removed if r.candidate.facts.path in gone]
        if not report.removed:
            return
        removed = report.removed
        await self.wiki.writer.submit_wait(rows.bury([(r.candidate, r.verdict.reason) for r in removed],
                                                     utc_iso(report.now)))
        await self.wiki.refresh_indexes({r.candidate.facts.path.split("/", 1)[0] for r in removed
                                         if "/" in r.candidate.facts.path})
        report.git_commit = await self._commit(removed)
        if report.git_commit:
            await self.wiki.writer.submit_wait(rows.record_commit(sorted(gone), report.git_commit))

    def _unlink_safely(self, plan: list[Removal]) -> list[str]:
        """Remove the files that are still the version judged (a person who just pinned or edited
        one wins; the next sweep judges the new version) and that git already holds exactly (so
        each stays recoverable). Returns the paths removed."""
        current: dict[str, bytes] = {}
        for removal in plan:
            cand = removal.candidate
            try:
                data = self.wiki.read(cand.facts.path)
            except OSError:  # deleted by hand meanwhile: the reconciler records that as an external edit
                continue
            if content_hash(data) == cand.content_hash:
                current[cand.facts.path] = data
        gone = []
        for path in sorted(committed(self.wiki.dir, current)):
            try:
                unlink_file(self.wiki.dir, path)
            except OSError as exc:
                log.warning("forget sweep cannot remove %s: %s", path, exc)
                continue
            gone.append(path)
        return gone

    async def _commit(self, removed: list[Removal]) -> str | None:
        reasons = sorted({r.verdict.reason for r in removed})
        oid = await self.wiki.committer.commit_now(
            f"forget: {len(removed)} pages ({', '.join(reasons)})")
        if oid is None:  # a concurrent commit may have taken the deletions: find it in history
            oid = await asyncio.to_thread(removal_commit, self.wiki.dir, removed[0].candidate.facts.path)
        return oid
