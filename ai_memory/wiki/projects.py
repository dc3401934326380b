"""A project's lifecycle: rename, merge and purge a project, move a session to another project,
and the old names that keep resolving afterwards.

Each verb is files first: its pages move (or go) and the projects file changes in one git
commit, made holding the git lock (``project_moves.carry_out``). The index then follows: the
alias tables and every row under the old name by ``store.projects.apply_map`` (idempotent; it
runs again at start and after a reindex), the pages by a reconcile. The whole plan is recorded
before the first file changes (``lifecycle_intent``) and cleared once the rows moved: a verb a
crash cut short anywhere is finished at the next start, before anything is committed, and
before any other verb plans. Callers serialize the verbs (the runtime's maintenance lock).
"""

from __future__ import annotations

import asyncio
import logging

import pygit2
from collections.abc import Callable
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError, Conflict, InputError, NotFound, StorageError
from ai_memory.core.names import UNSORTED
from ai_memory.core.page import ParsedPage, parse_page
from ai_memory.core.project_map import ProjectMap, checked_name, storable_session_id
from ai_memory.store.forgetting import bury_pages
from ai_memory.store.projects import apply_map, known, move_paths, project_paths, session_of
from ai_memory.wiki.files import IGNORED_DIRS, file_kind, read_file, remove_empty_folders, unlink_file
from ai_memory.wiki import lifecycle_intent
from ai_memory.wiki.alias_trust import accept, trusted
from ai_memory.wiki.git import blobs_at, commit_all, committed, head_commit
from ai_memory.wiki.git_repair import repair
from ai_memory.wiki.lifecycle_intent import Intent, PurgePlan
from ai_memory.wiki.project_index import INDEX_NAME, written_by_us
from ai_memory.wiki.project_moves import (
    MovePlan, carry_out, finish_move, map_stat, plan_folder, plan_pages, read_map,
)
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)


class ProjectLifecycle:
    """The lifecycle verbs over one wiki, and the map of old names they leave."""

    def __init__(self, wiki: Wiki) -> None:
        self.wiki = wiki
        self.problems: list[str] = []  # the projects file's
        self.unfinished: list[str] = []  # verbs a crash cut short that could not be finished
        self._moving = False  # a verb published its map and its file is not written yet
        self.file_map = ProjectMap()  # the projects file as written (with aliases held back here)
        self.held: dict[str, str] = {}  # aliases from elsewhere this machine does not apply (alias_trust)
        self._seen: tuple[int, ...] | None = None  # the projects file's stat when last read

    @property
    def map(self) -> ProjectMap:
        return self.wiki.project_map

    @map.setter
    def map(self, pmap: ProjectMap) -> None:
        self.wiki.project_map = pmap

    def canonical(self, name: str | None) -> str | None:
        """The project a client naming ``name`` means now (an old name gives the new one)."""
        return self.map.project_of(name)

    async def load(self, *, only_if_changed: bool = False) -> int:
        """Read the projects file and bring the index in step with it; the rows it moved (none
        while a verb is moving files: its map is published, its file not yet written)."""
        if self._moving:
            return 0
        seen = await asyncio.to_thread(map_stat, self.wiki.dir)
        if only_if_changed and seen is not None and seen == self._seen:
            return 0  # the file is as last read: no parse on every reconcile
        pmap, problems = await asyncio.to_thread(read_map, self.wiki.dir)
        applied, held = await asyncio.to_thread(trusted, self.wiki.dir, pmap)
        self._seen = seen
        for problem in set(problems) - set(self.problems):
            log.warning("%s", problem)
        for old, new in held.items() - self.held.items():
            log.warning("%s", _held_problem(old, new))
        self.problems, self.file_map, self.held = problems, pmap, held
        if only_if_changed and applied == self.map:
            return 0
        moved = await self.wiki.writer.submit_wait(lambda tx: apply_map(tx.conn, applied))
        self.map = applied
        return int(moved)

    def held_problems(self) -> list[str]:
        return [_held_problem(old, new) for old, new in sorted(self.held.items())]

    async def rename(self, old_name: object, new_name: object, *, dry_run: bool = False) -> dict[str, Any]:
        old, new = checked_name(old_name), checked_name(new_name, "new project", IGNORED_DIRS)
        if self.map.aliases.get(old) == new:
            return await self._bring_home(old, dry_run)
        await self._check_pair(old, new)
        if self.map.aliases.get(new, old) != old:  # taking back a name given up is a revert; another's is not
            raise Conflict(f"{new} is an old name of {self.map.aliases[new]}",
                           detail=f"clients naming {new} mean {self.map.aliases[new]}: pick another name")
        if await self._exists(new):
            raise Conflict(f"project {new} exists already",
                           detail=f"to move {old}'s pages into it: ai-memory project merge {old} {new}")
        return await self._move(MovePlan("rename", old, new, self.file_map.renamed(old, new)), dry_run)

    async def merge(self, src_name: object, dst_name: object, *, dry_run: bool = False) -> dict[str, Any]:
        src, dst = checked_name(src_name), checked_name(dst_name, "destination project", IGNORED_DIRS)
        if self.map.aliases.get(src) == dst:
            return await self._bring_home(src, dry_run)
        await self._check_pair(src, dst)
        if dst in self.map.aliases:
            target = self.map.aliases[dst]
            raise Conflict(f"{dst} is an old name of {target}", detail=f"merge into {target}")
        if not await self._exists(dst):
            raise NotFound(f"no project {dst}",
                           detail=f"to give {src} a new name: ai-memory project rename {src} {dst}")
        return await self._move(MovePlan("merge", src, dst, self.file_map.renamed(src, dst)), dry_run)

    async def _bring_home(self, old: str, dry_run: bool) -> dict[str, Any]:
        """Pages still under ``old``, an old name (a sync from a machine that had not seen the
        rename, a project line that could not be rewritten), merged into the project it means."""
        target = self.map.aliases[old]
        if not await self._exists(old):
            raise Conflict(f"{old} is an old name of {target}", detail="no page is left under it")
        return await self._move(MovePlan("merge", old, target, self.file_map), dry_run)

    async def move_session(self, session_id: str, project: object, *, dry_run: bool = False) -> dict[str, Any]:
        dst = self.canonical(checked_name(project, refused=IGNORED_DIRS))
        assert dst is not None
        session = await self.wiki.reader.run(lambda c: session_of(c, session_id))
        if session is None:
            raise NotFound("no such session", detail=session_id)
        src = session["project"] or UNSORTED
        if src == dst:
            raise InputError(f"session {session_id} is in {dst} already")
        if not storable_session_id(session_id):
            raise InputError("this session id cannot be recorded as moved", detail="1-256 printable characters")
        plan = MovePlan("move-session", src, dst, self.file_map.session_moved(session_id, dst))
        return await self._carry_out(plan, dry_run, f"move session {session_id}: {src} → {dst}",
                                     lambda: plan_pages(self.wiki.dir, plan, session["pages"]))

    async def purge(self, name: object, *, confirm: bool, dry_run: bool = False) -> dict[str, Any]:
        """Every page of the project leaves the work tree in one commit and becomes a tombstone
        (git history keeps it); the journal and its observations stay."""
        project = checked_name(name)
        await self._check_known(project)
        paths = await self.wiki.reader.run(lambda c: project_paths(c, project))
        if dry_run:
            return {"dry_run": True, "project": project, "removed": paths, "skipped": [], "git_commit": None}
        if not confirm:
            raise InputError(f"purging {project} needs confirm", detail="ai-memory project purge NAME --confirm")
        await self._settle(f"before purging project {project}")
        await self.finish_interrupted()
        removed, oid = await asyncio.to_thread(
            self.wiki.committer.exclusively, lambda: _remove_committed(self.wiki, project, paths))
        if oid is None and removed:  # git refused the commit: the committer retries (and repairs)
            self.wiki.committer.request(f"project purge: {project}")
        await self._bury(removed, oid)
        gone = {p.path for p in removed}
        return {"dry_run": False, "project": project, "removed": sorted(gone),
                "skipped": [p for p in paths if p not in gone], "git_commit": oid}

    async def _check_pair(self, src: str, dst: str) -> None:
        if src == dst:
            raise InputError("the two projects are the same", detail=src)
        await self._check_known(src)

    async def _check_known(self, name: str) -> None:
        if name in self.map.aliases:
            target = self.map.aliases[name]
            raise Conflict(f"{name} is an old name of {target}",
                           detail=f"name {target} instead (ai-memory project merge {name} {target} brings home"
                                  " pages left under it)")
        if not await self._exists(name):
            raise NotFound(f"no project {name}", detail="ai-memory project list shows them")

    async def _exists(self, name: str) -> bool:
        if await asyncio.to_thread(file_kind, self.wiki.dir, name) != "missing":
            return True
        return bool(await self.wiki.reader.run(lambda c: known(c, name)))

    async def _move(self, plan: MovePlan, dry_run: bool) -> dict[str, Any]:
        def planned() -> MovePlan:
            return plan_folder(self.wiki.dir, plan, [p for p in paths if not p.startswith(plan.src + "/")])

        paths = await self.wiki.reader.run(lambda c: project_paths(c, plan.src))
        return await self._carry_out(plan, dry_run, f"project {plan.verb}: {plan.src} → {plan.dst}", planned)

    async def _carry_out(self, plan: MovePlan, dry_run: bool, message: str,
                         planned: Callable[[], MovePlan]) -> dict[str, Any]:
        """The plan is made after everything waiting is committed, holding the git lock, and the
        new map is published before a file moves: a writer that names the old project from then
        on writes under the new one (``Wiki.write_pages`` moves a page still bound for the old
        folder), so no page lands in the folder after it is planned."""
        if dry_run:
            return {"dry_run": True, **(await asyncio.to_thread(planned)).as_json(), "rows_moved": 0}
        await self._settle(f"before {message}")
        await self.finish_interrupted()
        before = self.map
        applied = await self._applied(plan)
        try:
            async with self.wiki.placing:  # no page is placed by the old map while files move
                self.map, self._moving = applied, True
                plan.git_commit = await asyncio.to_thread(
                    self.wiki.committer.exclusively, lambda: carry_out(self.wiki.dir, planned(), message))
        except Conflict:  # refused before anything moved
            self.map = before
            raise
        except OSError as exc:  # what moved is in the work tree: the index follows it; the intent stays
            self.map = before
            await self.wiki.reconcile()
            raise StorageError(f"the {plan.verb} stopped midway",
                               detail=f"{exc}; it is finished at the next start or before the next project verb"
                               ) from exc
        finally:
            self._moving = False
        moved = await self._rows_follow(plan, message)
        return {"dry_run": False, **plan.as_json(), "rows_moved": moved}

    async def _rows_follow(self, plan: MovePlan, message: str) -> int:
        """The index after the files: rows under the old name or path move, the alias tables
        become the map's, the intent goes (the verb is whole), the moved pages are indexed."""
        if plan.git_commit is None:  # written, not committed: the committer retries (and repairs)
            self.wiki.committer.request(message)

        applied = await self._applied(plan)

        def rows(tx: Any) -> int:
            move_paths(tx.conn, plan.moves)
            return apply_map(tx.conn, applied)

        moved = await self.wiki.writer.submit_wait(rows)
        self.map, self.file_map = applied, plan.pmap
        await asyncio.to_thread(lifecycle_intent.clear, self.wiki.dir)
        await self.wiki.reconcile()
        return int(moved)

    async def _applied(self, plan: MovePlan) -> ProjectMap:
        """The map this machine applies once ``plan`` is carried out: a name a rename or a merge
        gives up is this machine's decision (``alias_trust.accept``), so it applies at once."""
        if plan.verb != "move-session":
            await asyncio.to_thread(accept, self.wiki.dir, {plan.src: plan.dst})
        applied, self.held = await asyncio.to_thread(trusted, self.wiki.dir, plan.pmap)
        return applied

    async def _bury(self, removed: list[ParsedPage], oid: str | None) -> None:
        await self.wiki.writer.submit_wait(bury_pages(removed, "purged", now_iso(), oid))
        await asyncio.to_thread(lifecycle_intent.clear, self.wiki.dir)
        await self.wiki.reconcile()

    async def finish_interrupted(self) -> str | None:
        """Finish a verb a crash (or an error midway) cut short, from its recorded intent: at
        start before anything is committed, and before another verb plans. Returns what was
        finished; a failure is logged and shown in ``problems`` (status), never a failed start."""
        try:
            intent = await asyncio.to_thread(lifecycle_intent.pending, self.wiki.dir)
            if intent is None:
                return None
            log.warning("finishing %r, which stopped midway", intent.message)
            await self._finish(intent)
            self.unfinished = []
        except (OSError, ValueError, pygit2.GitError, AiMemoryError) as exc:
            self.unfinished = [f"a project verb stopped midway and could not be finished: {exc}"]
            log.error("%s", self.unfinished[0])
            return None
        return intent.message

    async def _finish(self, intent: Intent) -> None:
        """Carry the recorded plan out again. Under the git lock, a lock file the crash left
        behind (the commit it killed) is removed first, whatever its age, when no process holds
        it: nothing else of ours commits meanwhile, and the verb's commit must not wait for it."""
        def again(finish: Callable[[], Any]) -> Any:
            repair(self.wiki.dir, stale_after=0.0)
            return finish()

        committer = self.wiki.committer
        if intent.move is not None:
            plan = intent.move
            plan.git_commit = await asyncio.to_thread(
                committer.exclusively, lambda: again(lambda: finish_move(self.wiki.dir, plan, intent.message)))
            await self._rows_follow(plan, intent.message)
        elif intent.purge is not None:
            purge = intent.purge
            removed, oid = await asyncio.to_thread(
                committer.exclusively, lambda: again(lambda: _finish_purge(self.wiki, purge, intent.message)))
            if oid is None:  # git refused the commit: the committer retries (and repairs)
                self.wiki.committer.request(intent.message)
            await self._bury(removed, oid)

    async def _settle(self, reason: str) -> None:
        """Everything waiting for its commit (and any edit made outside) is committed first, so
        the verb's own commit holds only its change."""
        await self.wiki.committer.flush()
        await self.wiki.committer.commit_now(f"external edit: {reason}")


def _held_problem(old: str, new: str) -> str:
    return (f"the projects file (from a sync) makes {old} an old name of {new}, but {old}/ holds pages here:"
            f" not applied, events naming {old} stay in {old}; to accept it: ai-memory project merge {old} {new}"
            f" (or rename, where {new} has no pages here)")


def _remove_committed(wiki: Wiki, project: str, paths: list[str]) -> tuple[list[ParsedPage], str | None]:
    """Under the git lock: the pages whose bytes HEAD holds (an edit made since is kept for the
    next purge) recorded as the intent, then removed with the folder's generated index.md, in
    one commit."""
    current = {}
    for rel in paths:
        try:
            current[rel] = read_file(wiki.dir, rel)[0]
        except OSError:
            continue
    plan = PurgePlan(project, sorted(committed(wiki.dir, current)), head_commit(wiki.dir))
    lifecycle_intent.record(wiki.dir, Intent(_purge_message(plan), purge=plan))
    return _finish_purge(wiki, plan, _purge_message(plan))


def _purge_message(plan: PurgePlan) -> str:
    return f"project purge: {plan.project} ({len(plan.paths)} pages)"


def _finish_purge(wiki: Wiki, plan: PurgePlan, message: str) -> tuple[list[ParsedPage], str | None]:
    """Remove what is left of the plan's pages (only a file still holding the bytes ``base``
    holds: one changed since stays), the generated index.md and the emptied folder, commit; the
    removed pages as ``base`` held them (for their tombstones), and the commit that removed them."""
    held = blobs_at(wiki.dir, plan.base, plan.paths) if plan.base else {}
    removed = []
    for rel, data in sorted(held.items()):
        try:
            there = read_file(wiki.dir, rel)[0]
        except FileNotFoundError:
            there = None
        if there is not None and there != data:
            continue
        if there is not None:
            unlink_file(wiki.dir, rel)
        removed.append(parse_page(rel, data))
    index = f"{plan.project}/{INDEX_NAME}"
    try:
        if written_by_us(read_file(wiki.dir, index)[0], index):
            unlink_file(wiki.dir, index)
    except OSError:
        pass
    if file_kind(wiki.dir, plan.project) == "other":
        remove_empty_folders(wiki.dir, plan.project)
    try:
        return removed, commit_all(wiki.dir, message) or head_commit(wiki.dir)  # HEAD: committed before a crash
    except (pygit2.GitError, OSError) as exc:
        log.warning("%s: git refused the commit (%s); it is retried", message, exc)
        return removed, None
