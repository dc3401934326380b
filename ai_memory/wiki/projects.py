"""A project's lifecycle: rename, merge and purge a project, move a session to another project,
and the old names that keep resolving afterwards.

Each verb is files first: its pages move (or go) and the projects file changes in one git
commit, made holding the git lock (``project_moves.carry_out``). The index then follows: the
alias tables and every row under the old name by ``store.projects.apply_map`` (idempotent; it
runs again at start and after a reindex, so a crash between the commit and the rows heals), the
pages by a reconcile. Callers serialize the verbs (the runtime's maintenance lock).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import Conflict, InputError, NotFound, StorageError
from ai_memory.core.names import UNSORTED
from ai_memory.core.page import ParsedPage, parse_page
from ai_memory.core.project_map import ProjectMap, checked_name, storable_session_id
from ai_memory.store.forgetting import bury_pages
from ai_memory.store.projects import apply_map, known, move_paths, project_paths, session_of
from ai_memory.wiki.files import IGNORED_DIRS, file_kind, read_file, remove_empty_folders, unlink_file
from ai_memory.wiki.git import commit_all, committed
from ai_memory.wiki.project_index import INDEX_NAME, written_by_us
from ai_memory.wiki.project_moves import MovePlan, carry_out, map_stat, plan_folder, plan_pages, read_map
from ai_memory.wiki.service import Wiki

log = logging.getLogger(__name__)


class ProjectLifecycle:
    """The lifecycle verbs over one wiki, and the map of old names they leave."""

    def __init__(self, wiki: Wiki) -> None:
        self.wiki = wiki
        self.problems: list[str] = []
        self._moving = False  # a verb published its map and its file is not written yet
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
        self._seen = seen
        for problem in set(problems) - set(self.problems):
            log.warning("%s", problem)
        self.problems = problems
        if only_if_changed and pmap == self.map:
            return 0
        moved = await self.wiki.writer.submit_wait(lambda tx: apply_map(tx.conn, pmap))
        self.map = pmap
        return int(moved)

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
        return await self._move(MovePlan("rename", old, new, self.map.renamed(old, new)), dry_run)

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
        return await self._move(MovePlan("merge", src, dst, self.map.renamed(src, dst)), dry_run)

    async def _bring_home(self, old: str, dry_run: bool) -> dict[str, Any]:
        """Pages still under ``old``, an old name (a sync from a machine that had not seen the
        rename, a project line that could not be rewritten), merged into the project it means."""
        target = self.map.aliases[old]
        if not await self._exists(old):
            raise Conflict(f"{old} is an old name of {target}", detail="no page is left under it")
        return await self._move(MovePlan("merge", old, target, self.map), dry_run)

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
        plan = MovePlan("move-session", src, dst, self.map.session_moved(session_id, dst))
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
        removed, oid = await asyncio.to_thread(
            self.wiki.committer.exclusively, lambda: _remove_committed(self.wiki, project, paths))
        await self.wiki.writer.submit_wait(bury_pages(removed, "purged", now_iso(), oid))
        await self.wiki.reconcile()
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
        before, self.map, self._moving = self.map, plan.pmap, True
        try:
            plan.git_commit = await asyncio.to_thread(
                self.wiki.committer.exclusively, lambda: carry_out(self.wiki.dir, planned(), message))
        except Conflict:  # refused before anything moved
            self.map = before
            raise
        except OSError as exc:  # what moved is in the work tree: the index follows it, a rerun finishes
            self.map = before
            await self.wiki.reconcile()
            finish = ("run it again" if plan.verb == "move-session"  # a rerun of a rename finds NEW taken
                      else f"ai-memory project merge {plan.src} {plan.dst}")
            raise StorageError(f"the {plan.verb} stopped midway", detail=f"{exc}; to finish it: {finish}") from exc
        finally:
            self._moving = False
        if plan.git_commit is None:  # written, not committed: the committer retries (and repairs)
            self.wiki.committer.request(message)

        def rows(tx: Any) -> int:
            move_paths(tx.conn, plan.moves)
            return apply_map(tx.conn, plan.pmap)

        moved = await self.wiki.writer.submit_wait(rows)
        await self.wiki.reconcile()
        return {"dry_run": False, **plan.as_json(), "rows_moved": moved}

    async def _settle(self, reason: str) -> None:
        """Everything waiting for its commit (and any edit made outside) is committed first, so
        the verb's own commit holds only its change."""
        await self.wiki.committer.flush()
        await self.wiki.committer.commit_now(f"external edit: {reason}")


def _remove_committed(wiki: Wiki, project: str, paths: list[str]) -> tuple[list[ParsedPage], str | None]:
    """Under the git lock: remove the pages whose bytes HEAD holds (an edit made since is kept
    for the next purge), the folder's generated index.md, then commit once."""
    current = {}
    for rel in paths:
        try:
            current[rel] = read_file(wiki.dir, rel)[0]
        except OSError:
            continue
    removed = []
    for rel in sorted(committed(wiki.dir, current)):
        unlink_file(wiki.dir, rel)
        removed.append(parse_page(rel, current[rel]))
    index = f"{project}/{INDEX_NAME}"
    try:
        if written_by_us(read_file(wiki.dir, index)[0], index):
            unlink_file(wiki.dir, index)
    except OSError:
        pass
    if file_kind(wiki.dir, project) == "other":
        remove_empty_folders(wiki.dir, project)
    return removed, commit_all(wiki.dir, f"project purge: {project} ({len(removed)} pages)")
