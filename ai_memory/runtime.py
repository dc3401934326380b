"""The runtime: builds and owns every long-lived part of the daemon from a Config.

Background work (spool drain, git commits, the watcher, the reconciler, idle sessions, the
forget sweep, scheduled backups, the git sync, the LLM consolidation worker when ``[llm]`` is set)
lives in tasks created by ``start`` and cancelled and awaited by ``stop``: no orphans.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_memory import datadir
from ai_memory.backup import backup_due_in, scheduled_backup
from ai_memory.config import Config
from ai_memory.coordination.memories import Memories
from ai_memory.coordination.users import Users
from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError, ConfigError
from ai_memory.core.names import project_name
from ai_memory.core.recall import RecallSettings
from ai_memory.heap import IdleTrim
from ai_memory.ingest.hooks import RecentProjects
from ai_memory.ingest.quota import StorageQuota
from ai_memory.ingest.sessions import SessionCompiler
from ai_memory.ingest.spool import SpoolStats, drain_once
from ai_memory.ingest.spool_watch import SpoolWatcher
from ai_memory.llm.settings import llm_settings
from ai_memory.retrieval.embedding_job import EmbeddingJob, lower_thread_priority
from ai_memory.retrieval.search import Answer, Query, Retriever
from ai_memory.retrieval.vectors import VectorIndex, single_threaded_blas
from ai_memory.store.row_journal import snapshot
from ai_memory.store.observations import InsertResult
from ai_memory.store.pages import count_access
from ai_memory.store.raw_log import JournalPosition, journal_position
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer
from ai_memory.wiki.forget import Forgetter, SweepReport, retention_params
from ai_memory.wiki.git import Committer
from ai_memory.wiki.lint_cache import LintCache
from ai_memory.wiki.projects import ProjectLifecycle
from ai_memory.wiki.recover import recover_database
from ai_memory.wiki.repo import ensure_repo
from ai_memory.wiki.service import Wiki
from ai_memory.wiki.sync import SyncReport, Syncer, syncer_for
from ai_memory.wiki.watcher import WikiWatcher

if TYPE_CHECKING:
    from ai_memory.coordination.consolidation import Consolidator
    from ai_memory.wiki.reindex import RebuildReport
    from ai_memory.llm.providers import Provider
    from ai_memory.retrieval.llm_rerank import LlmReranker

log = logging.getLogger(__name__)
RECONCILE_SHARE = 0.005  # the most of the wall time the periodic reconcile may take (at 10,000 pages: every ~70 s)
RECONCILE_MAX_INTERVALS = 10  # but never further apart than this many intervals (one slow run under load)
STOP_TASKS_S = 10.0


@dataclass
class Runtime:
    """Everything the server and background tasks share; no module-level state anywhere."""

    config: Config
    token: str
    writer: Writer
    reader: Reader
    wiki: Wiki
    sessions: SessionCompiler
    watcher: WikiWatcher | None
    spool_watcher: SpoolWatcher
    retriever: Retriever
    embedding: EmbeddingJob | None
    memories: Memories
    users: Users
    forgetter: Forgetter
    syncer: Syncer
    projects: ProjectLifecycle
    lint: LintCache
    quota: StorageQuota
    heap: IdleTrim  # trims the allocator once the work that frees most of it pauses
    llm: "LlmParts | None" = None  # None: [llm] unset, nothing of it runs
    started_at: float = field(default_factory=time.time)
    spool: SpoolStats = field(default_factory=SpoolStats)
    recent_projects: RecentProjects = field(default_factory=RecentProjects)  # hooks' cwd to project
    _oneshots: set[asyncio.Task[object]] = field(default_factory=set)
    _maintenance: asyncio.Lock = field(default_factory=asyncio.Lock)
    _draining: asyncio.Lock = field(default_factory=asyncio.Lock)  # one drain at a time, none while a reindex swaps
    _last_access: dict[str, float] = field(default_factory=dict)

    @classmethod
    def build(cls, config: Config) -> "Runtime":
        """Lay out the data dir (first start) and construct the parts; nothing runs yet."""
        datadir.prepare(config.data_dir)
        ensure_repo(config.sub("wiki"))
        writer = Writer(
            config.db_path, config.sub("raw"),
            queue_size=config.writer.queue_size, max_batch=config.writer.max_batch,
        )
        reader = Reader(config.db_path)
        heap = IdleTrim()  # the allocator is the process's: one trim, told by whatever frees most
        committer = Committer(config.sub("wiki"), config.wiki.commit_window_s, heap)
        wiki = Wiki(config.sub("wiki"), writer, reader, committer, heap)
        embedding, retriever, query_model = _embedding_and_retriever(config, reader, writer)
        if embedding is not None:
            wiki.on_indexed = embedding.wake
        memories = Memories(wiki, reader, lambda: query_model if embedding and embedding.ready else None)
        token = datadir.read_token(config.token_path)
        llm = _llm_parts(config, wiki, reader, memories)
        on_compiled = llm.consolidator.enqueue_rows if llm and llm.consolidator else None
        return cls(
            config=config, token=token, writer=writer, reader=reader, users=Users(token, writer, reader),
            wiki=wiki, sessions=SessionCompiler(wiki, reader, config.sessions.idle_minutes, on_compiled),
            watcher=WikiWatcher(wiki) if config.wiki.watch else None,
            spool_watcher=SpoolWatcher(config.sub("spool")),
            retriever=retriever, embedding=embedding, memories=memories,
            forgetter=Forgetter(wiki, retention_params(config)), syncer=syncer_for(wiki, config),
            projects=ProjectLifecycle(wiki),
            lint=LintCache(reader, config.sub("wiki"), config.sub("raw"), config.db_path),
            quota=StorageQuota(config.server.user_bytes_per_day), heap=heap,
            llm=llm,
        )

    def parts(self) -> list[Callable[[], AbstractAsyncContextManager[None]]]:
        """One context per long-lived part, in start order; each undoes only what it started, so
        a failure midway stops the parts already running and nothing else (``server.app``
        enters them on an exit stack, and leaves them in reverse)."""
        parts: list[Callable[[], AbstractAsyncContextManager[None]]] = [self._database, self._priorities, self._store, self._indexed, self._commits,
                 self._oneshots_drained]
        if self.watcher is not None:
            parts.append(self._wiki_watch)
        parts.append(self._spool)
        if self.llm is not None and self.llm.provider is not None:
            parts.append(self._llm_provider)  # closed after the consolidation task has stopped
        parts += [partial(self._background, name, factory) for name, factory in self._schedules()]
        parts.append(self._frozen)
        return parts

    @asynccontextmanager
    async def _llm_provider(self) -> AsyncIterator[None]:
        assert self.llm is not None and self.llm.provider is not None
        try:
            yield
        finally:
            await self.llm.provider.close()

    @asynccontextmanager
    async def _database(self) -> AsyncIterator[None]:
        # before anything opens the database: a damaged or missing one is rebuilt, never served
        db, wiki_dir, raw = self.config.db_path, self.config.sub("wiki"), self.config.sub("raw")
        recovered = await asyncio.to_thread(recover_database, wiki_dir, raw, db)
        if recovered:
            log.warning("%s", recovered)
        yield

    @asynccontextmanager
    async def _priorities(self) -> AsyncIterator[None]:
        # the readers' threads (searches) are started before our priority is lowered: they keep the normal one
        await self.reader.start_threads()
        # the loop thread (hook parsing and sanitizing: most of the daemon's CPU) and what it
        # starts from now on yield to searches and to the user's own programs
        lower_thread_priority(self.config.server.ingest_nice)
        yield

    @asynccontextmanager
    async def _store(self) -> AsyncIterator[None]:
        await self.writer.start()  # migrates the schema before any reader opens the file
        try:
            yield
        finally:
            log.info("stopping: closing the store")
            self.reader.close()  # readers first: the writer's close is then the last, and clears the WAL
            await self.writer.stop()

    @asynccontextmanager
    async def _indexed(self) -> AsyncIterator[None]:
        # first: a project verb a crash cut short is finished before anything reads or commits the wiki
        if finished := await self.projects.finish_interrupted():
            log.warning("start-up: finished %r", finished)
        await self._journal_rows_once()
        await self.users.load()  # team tokens are checked from memory on every request
        await self.quota.load(self.reader)  # what each user stored today: a restart gives no second quota
        report = await self.wiki.reconcile()  # edits made while the daemon was down
        if report.changed:
            log.info("start-up reconcile: %d indexed, %d removed", len(report.indexed), len(report.removed))
        if await self.projects.load():  # rows a lifecycle verb's commit left behind (a crash), or a sync's
            log.info("start-up: rows moved to follow the projects file")
        yield

    @asynccontextmanager
    async def _commits(self) -> AsyncIterator[None]:
        # pages an earlier run wrote but could not commit (git was failing when it stopped)
        self.wiki.committer.request("commit what an earlier run left uncommitted")
        try:
            async with self._task(self.wiki.committer.run(), "git-commits"):
                yield
        finally:
            log.info("stopping: last git commit")
            await self.wiki.committer.flush()

    @asynccontextmanager
    async def _oneshots_drained(self) -> AsyncIterator[None]:
        """Session compiles and access counts started by requests: finished (bounded) at the end."""
        try:
            yield
        finally:
            if self._oneshots:
                _, pending = await asyncio.wait(list(self._oneshots), timeout=5)
                for task in pending:
                    task.cancel()

    @asynccontextmanager
    async def _wiki_watch(self) -> AsyncIterator[None]:
        assert self.watcher is not None
        self.watcher.start()
        try:
            async with self._task(self.watcher.run(), "wiki-watcher"):
                yield
        finally:
            await asyncio.to_thread(self.watcher.stop)

    @asynccontextmanager
    async def _spool(self) -> AsyncIterator[None]:
        interval = self.config.spool.drain_interval_s
        async with self._task(self._every(interval, self.drain_spool, maintenance=False), "spool-drain"):
            self.spool_watcher.start()  # hooks only spool: a file that lands is delivered at once
            try:
                drain = partial(self._guarded, self.drain_spool, maintenance=False)
                async with self._task(self.spool_watcher.run(drain), "spool-watch"):
                    yield
            finally:
                await asyncio.to_thread(self.spool_watcher.stop)

    def _schedules(self) -> list[tuple[str, Callable[[], Coroutine[Any, Any, None]]]]:
        """The background tasks this configuration runs, by name."""
        every, reconcile_s = self._every, self.config.wiki.reconcile_interval_s
        found: list[tuple[str, Callable[[], Coroutine[Any, Any, None]]]] = [
            ("reconcile", lambda: self._reconcile_paced(reconcile_s)),
            ("idle-sessions", lambda: every(reconcile_s, self.sessions.finalize_idle)),
        ]
        if self.config.forget.enabled:
            found.append(("forget-sweep", self._sweeps_on_schedule))
        if self.config.backup.interval_hours > 0:
            found.append(("scheduled-backups", self._backups_on_schedule))
        if self.syncer.remote:  # at start (pull what others wrote meanwhile), then every interval
            found.append(("git-sync", lambda: every(self.config.sync.interval_s, self._synced)))
        if self.embedding is not None:
            found.append(("embeddings", self.embedding.run))
        if self.llm is not None and self.llm.consolidator is not None:
            found.append(("llm-consolidation", self.llm.consolidator.run))
        return found

    @asynccontextmanager
    async def _background(self, name: str, factory: Callable[[], Coroutine[Any, Any, None]]) -> AsyncIterator[None]:
        async with self._task(factory(), name):
            yield

    @asynccontextmanager
    async def _frozen(self) -> AsyncIterator[None]:
        # Everything built so far lives as long as the daemon: keep it out of every GC pass.
        gc.freeze()
        log.info("data dir %s ready", self.config.data_dir)
        try:
            yield
        finally:
            log.info("stopping: background tasks")

    @asynccontextmanager
    async def _task(self, coro: Coroutine[Any, Any, None], name: str) -> AsyncIterator[None]:
        """``coro`` as a task for the context's life; cancelled and awaited (bounded) at its end."""
        task = asyncio.create_task(coro, name=name)
        try:
            yield
        finally:
            task.cancel()
            # bounded: a task that ignores its cancel must not hold the shutdown
            _, stuck = await asyncio.wait([task], timeout=STOP_TASKS_S)
            if stuck:
                log.error("background task %s did not stop within %.0f s", name, STOP_TASKS_S)

    async def _journal_rows_once(self) -> None:
        """Once per data dir: journal every row of the tables whose truth is the journal, as a
        database from before they were journaled holds them, so that a rebuild keeps them too (a
        marker file beside the database says done; were it lost, the rows are journaled again,
        which changes nothing a replay ends in)."""
        marker = self.config.sub("db") / "rows.journaled"
        if marker.exists():
            return

        def job(tx: Any) -> int:
            records = snapshot(tx.conn)
            for record in records:
                tx.journal(record)
            return len(records)

        count = await self.writer.submit_wait(job)
        await asyncio.to_thread(marker.touch)
        if count:
            log.info("journaled %d rows for rebuilds", count)

    async def search(self, query: Query) -> Answer:
        """The local answer, reordered by the model when ``llm.rerank`` is on."""
        query = self._named(query)
        if self.llm is not None and self.llm.reranker is not None:
            return await self.llm.reranker.answer(query, self._local_search)
        return await self._local_search(query)

    def _named(self, query: Query) -> Query:
        """The query's projects as they are named now (a client may still send an old name)."""
        def now(name: str) -> str:
            return self.projects.canonical(project_name(name) or name) or name

        return dataclasses.replace(query, project=now(query.project) if query.project else query.project,
                                   projects=tuple(now(p) for p in query.projects))

    async def search_locally(self, query: Query) -> Answer:
        """A search without the model's rerank (prompt recall: on every prompt, within a hook's
        budget, at no provider's cost)."""
        return await self._local_search(self._named(query))

    @property
    def recall_settings(self) -> RecallSettings:
        r = self.config.recall
        return RecallSettings(max_items=r.max_items, max_chars=r.max_chars, session_max_chars=r.session_max_chars,
                              min_confidence=r.min_confidence, min_ratio=r.min_ratio)

    async def _local_search(self, query: Query) -> Answer:
        return await self.reader.run(lambda c: self.retriever.answer(c, query))

    def notice(self, result: InsertResult) -> None:
        """Called after an event is stored: a session-end compiles the session in the background."""
        if self.embedding is not None:
            self.embedding.wake()
        if result.event == "session-end" and not result.duplicate:
            task = asyncio.create_task(self._finalize_quietly(result.session_id))
            self._oneshots.add(task)
            task.add_done_callback(self._oneshots.discard)

    async def _finalize_quietly(self, session_id: str) -> None:
        try:
            await self.sessions.finalize(session_id)
        except Exception:  # logged; the idle pass retries it later
            log.exception("could not compile session %s", session_id)

    def note_access(self, paths: list[str]) -> None:
        """Count a search hit at most once per page per minute (retention reads these counts)."""
        now = time.time()
        due = [p for p in paths if now - self._last_access.get(p, 0.0) >= 60.0]
        if not due:
            return
        for path in due:
            self._last_access[path] = now
        if len(self._last_access) > 50_000:
            self._last_access = {p: t for p, t in self._last_access.items() if now - t < 60.0}
        task = asyncio.create_task(self._quiet(self.writer.submit(count_access(due, now_iso()))))
        self._oneshots.add(task)
        task.add_done_callback(self._oneshots.discard)

    async def _quiet(self, awaitable: Awaitable[object]) -> None:
        try:
            await awaitable
        except AiMemoryError as exc:  # a busy writer skips an access count; nothing more
            log.debug("access count skipped: %s", exc.message)

    async def forget_sweep(self, dry_run: bool) -> SweepReport:
        """A sweep on request; never beside a reindex, a reconcile or the daily sweep."""
        async with self._maintenance:
            return await self.forgetter.sweep(dry_run=dry_run)

    async def sync(self, remote: str | None = None) -> SyncReport:
        """A git sync on request; like the scheduled one, never beside a reindex or a sweep."""
        async with self._maintenance:
            return await self._synced(remote)

    async def _synced(self, remote: str | None = None) -> SyncReport:
        report = await self.syncer.sync(remote)
        await self.projects.load(only_if_changed=True)  # another machine renamed or merged a project
        return report

    async def reindex(self) -> dict[str, object]:
        """Rebuild the database from files and journal while serving; swap it in atomically."""
        from ai_memory.wiki.reindex import rebuild

        async with self._maintenance:
            db, wiki, raw = self.config.db_path, self.config.sub("wiki"), self.config.sub("raw")
            read_from = await asyncio.to_thread(journal_position, raw)
            with self.heap.working():  # it reads every page and its history
                report = await asyncio.to_thread(rebuild, wiki, raw, db)
            async with self._draining:  # the spool waits for the swap (the writer is closed), not for the rebuild
                late = await self._swap_in_rebuilt(Path(report.path), read_from)
            await self.wiki.reconcile()  # pages written while we rebuilt
            await self.projects.load()
            self.wiki.on_indexed()  # a rebuilt index: whatever it lacks a vector for is embedded now
        return {"pages": report.pages, "broken_pages": report.broken_pages,
                "observations": report.observations + late.observations,
                "rows_only_in_old_file": report.rows_only_in_old_file, "vector_links_kept": report.vector_links_kept}

    async def _swap_in_rebuilt(self, new_db: Path, read_from: JournalPosition) -> "RebuildReport":
        """With the writer closed (what was queued committed; new writes get 503): the journal's
        records since the rebuild began reading it replayed into the new file, and the file
        swapped in."""
        from ai_memory.wiki.reindex import catch_up, swap_in

        await self.writer.suspend()
        try:
            late = await asyncio.to_thread(catch_up, new_db, self.config.sub("raw"), read_from)
            await asyncio.to_thread(swap_in, new_db, self.config.db_path)
            # after the swap, never before: a connection opened earlier would read the
            # deleted old file through the new file's WAL
            self.reader.reset()
        finally:
            await self.writer.resume()
        return late

    async def _reconcile_paced(self, interval: float) -> None:
        """Reconcile every ``interval`` seconds, or less often where comparing every file takes
        longer than RECONCILE_SHARE of the time: on a big wiki an idle daemon would otherwise
        spend most of its CPU on the safety net (the watcher sees edits as they happen)."""
        await asyncio.sleep(interval)
        while True:
            started = time.monotonic()
            await self._guarded(self._reconcile)
            paced = (time.monotonic() - started) / RECONCILE_SHARE
            await asyncio.sleep(min(max(interval, paced), RECONCILE_MAX_INTERVALS * interval))

    async def _reconcile(self) -> None:
        await self.wiki.reconcile()
        await self.projects.load(only_if_changed=True)  # a sync or a person changed the projects file

    async def project_change(self, verb: Callable[[], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """A project lifecycle verb (``self.projects``), never beside a reindex, a sweep or a
        sync."""
        async with self._maintenance:
            return await verb()

    async def _sweeps_on_schedule(self) -> None:
        """A forget sweep every interval, counted from the last one (a marker file), so a daemon
        restarted more often than the interval still sweeps. The very first sweep waits one whole
        interval: a daemon started to look at an old wiki must not change it before anyone asked."""
        interval = self.config.forget.sweep_interval_hours * 3600.0
        marker = self.config.sub("db") / "forget-sweep.last"
        while True:
            await asyncio.sleep(await asyncio.to_thread(_due_in, marker, interval))
            try:
                async with self._maintenance:
                    await self.forgetter.sweep()
            except AiMemoryError as exc:
                log.warning("forget sweep failed: %s", exc.message)
            except Exception:
                log.exception("forget sweep failed")
            await asyncio.to_thread(marker.touch)

    async def _backups_on_schedule(self) -> None:
        """A backup every backup.interval_hours, counted from the newest archive, then pruning.

        Under the maintenance lock: a reindex must not swap the database file mid-copy (the
        other periodic passes wait for the backup; hooks do not).
        """
        interval = self.config.backup.interval_hours * 3600.0
        while True:
            await asyncio.sleep(backup_due_in(self.config.data_dir, interval))
            try:
                async with self._maintenance:
                    report, pruned = await asyncio.to_thread(scheduled_backup, self.config)
                log.info("scheduled backup %s (%d bytes); %d old archives pruned", report.path, report.size, len(pruned))
            except AiMemoryError as exc:
                log.warning("scheduled backup failed: %s (%s)", exc.message, exc.detail)
                await asyncio.sleep(interval)
            except Exception:
                log.exception("scheduled backup failed")
                await asyncio.sleep(interval)

    async def drain_spool(self) -> int:
        """Store what hooks spooled. Never behind maintenance (a sync may take minutes, a backup,
        a sweep or a reconcile seconds): events a hook already spooled belong in the index and
        the next briefing at once. It waits only for another drain, and while a reindex swaps
        the database file (the writer is closed then)."""
        async with self._draining:
            return await drain_once(
                self.writer, self.config.sub("spool"),
                max_files=self.config.spool.max_files,
                max_age_days=self.config.spool.max_age_days,
                stats=self.spool, on_stored=self.notice,
            )

    async def _every(self, interval: float, fn: Callable[[], Awaitable[object]], first_wait: bool = False,
                     maintenance: bool = True) -> None:
        """Run ``fn`` now (or after ``interval`` seconds) and then every interval; failures wait a turn."""
        if first_wait:
            await asyncio.sleep(interval)
        while True:
            await self._guarded(fn, maintenance=maintenance)
            await asyncio.sleep(interval)

    async def _guarded(self, fn: Callable[[], Awaitable[object]], maintenance: bool = True) -> None:
        """``fn`` (under the maintenance lock unless told otherwise); a failure is logged and
        waits for the next turn."""
        try:
            async with self._maintenance if maintenance else contextlib.nullcontext():
                await fn()
        except AiMemoryError as exc:
            log.warning("%s failed: %s", getattr(fn, "__name__", fn), exc.message)
        except Exception:
            log.exception("%s failed", getattr(fn, "__name__", fn))


@dataclass(frozen=True)
class LlmParts:
    """The optional LLM parts, or why they are off although ``llm.provider`` is set."""

    provider: "Provider | None"
    consolidator: "Consolidator | None"
    reranker: "LlmReranker | None"
    problem: str | None = None

    async def describe(self) -> dict[str, Any]:
        if self.consolidator is None:
            return {"enabled": False, "problem": self.problem}
        found = await self.consolidator.describe()
        if self.reranker is not None:
            found["rerank_calls"] = self.reranker.describe()
        return found


def _llm_parts(config: Config, wiki: Wiki, reader: Reader, memories: Memories) -> LlmParts | None:
    """None when [llm] is unset; a bad [llm] setting leaves it off with the reason in status,
    never stops the daemon that records the hooks."""
    try:
        settings = llm_settings(config)
    except ConfigError as exc:
        log.warning("LLM consolidation is off: %s%s", exc.message, f" ({exc.detail})" if exc.detail else "")
        return LlmParts(None, None, None, exc.message + (f" ({exc.detail})" if exc.detail else ""))
    if settings is None:
        return None
    # imported only when configured: a daemon without [llm] loads none of it (nor jsonschema)
    from ai_memory.coordination.consolidation import Consolidator
    from ai_memory.llm.providers import make_provider
    from ai_memory.retrieval.llm_rerank import LlmReranker

    provider = make_provider(settings)
    reranker = LlmReranker(provider, settings.rerank_timeout_s) if settings.rerank else None
    return LlmParts(provider, Consolidator(settings, provider, wiki, reader, memories), reranker)


def _embedding_and_retriever(config: Config, reader: Reader, writer: Writer):
    """The embedding job, the retriever and the query model, over one copy of the model: the
    job's batches and the searches each encode with a tokenizer of their own, each pass on the
    caller's thread, so a batch runs at the job's lower priority and a search's at its own."""
    if not config.embed.enabled:
        return None, Retriever(None, None, ready=lambda: False), None
    from ai_memory.embed.model import DIM, MODEL_ID, MiniLM

    single_threaded_blas()  # numpy's products in searches: one thread each, beside the model's own
    embed = config.embed
    batches = MiniLM(Path(embed.model_dir) if embed.model_dir else None, embed.threads, embed.precision,
                     cache_dir=config.model_cache_dir)
    embedding = EmbeddingJob(batches, reader, writer, query_embedder=batches.sibling(), nice=config.server.ingest_nice)
    index = VectorIndex(MODEL_ID, DIM, codes_dir=config.db_path.parent)
    retriever = Retriever(embedding.query_embedder, index, ready=lambda: embedding.ready)
    return embedding, retriever, embedding.query_embedder


def _due_in(marker: Path, interval_s: float) -> float:
    """Seconds until the next run: one interval after the marker's time (created now if absent)."""
    try:
        last = marker.stat().st_mtime
    except FileNotFoundError:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        return interval_s
    return max(0.0, interval_s - (time.time() - last))
