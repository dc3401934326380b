"""The one writer: a bounded asyncio queue feeding one thread that owns the write connection.

Group commit: the pump takes whatever is waiting (up to ``max_batch``), and the writer thread
runs each job in its own SAVEPOINT inside one transaction, appends the batch's journal records
(what the jobs journaled, and the rows they changed in a table whose truth is the journal:
``row_journal``) to the raw segment with one fsync, commits once, and only then are the jobs'
futures resolved.
A job that raises is rolled back to its savepoint and fails alone. Nobody is acknowledged
before the commit is durable.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from ai_memory.core.errors import AiMemoryError, DiskFull, Overloaded, StorageError
from ai_memory.store import row_journal
from ai_memory.store.connection import open_write_connection
from ai_memory.store.migrations import migrate
from ai_memory.store.raw_log import RawJournal

log = logging.getLogger(__name__)
T = TypeVar("T")


class WriteTx:
    """What a job sees: the connection, and a journal to which it may add raw records."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.records: list[dict[str, Any] | bytes] = []

    def journal(self, record: dict[str, Any] | bytes) -> None:
        """Append ``record`` to the raw segment if, and only if, this job commits."""
        self.records.append(record)


Job = Callable[[WriteTx], T]


@dataclass
class _Pending(Generic[T]):
    fn: Job[T]
    future: asyncio.Future[T]
    result: Any = None
    error: BaseException | None = None


@dataclass
class WriterStats:
    batches: int = 0
    jobs: int = 0
    failed_batches: int = 0
    last_error: str | None = None
    started_at: float = field(default_factory=time.time)

    @property
    def mean_batch(self) -> float:
        return self.jobs / self.batches if self.batches else 0.0


_STOP = object()


class Writer:
    """Owns the only SQLite write connection; every SQL write in ai-memory goes through it."""

    def __init__(
        self,
        db_path: Path,
        raw_dir: Path | None,
        *,
        queue_size: int = 1024,
        max_batch: int = 256,
    ) -> None:
        self._db_path = db_path
        self._journal = RawJournal(raw_dir) if raw_dir is not None else None
        self._queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=queue_size)
        self._max_batch = max_batch
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ai-memory-writer")
        self._conn: sqlite3.Connection | None = None
        self._pump: asyncio.Task[None] | None = None
        self.stats = WriterStats()

    @property
    def depth(self) -> int:
        return self._queue.qsize()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._open)
        self._pump = asyncio.create_task(self._run(), name="ai-memory-writer-pump")

    def _open(self) -> None:
        self._conn = open_write_connection(self._db_path)
        migrate(self._conn)
        row_journal.install(self._conn)

    async def submit(self, fn: Job[T]) -> T:
        """Queue a job and wait until it is durably committed; Overloaded when the queue is full."""
        pending = self._pending(fn)
        try:
            self._queue.put_nowait(pending)
        except asyncio.QueueFull:
            raise Overloaded("writer queue is full", retry_after=1.0) from None
        return await pending.future

    async def submit_wait(self, fn: Job[T]) -> T:
        """Like submit, but waits for room instead of refusing (internal, non-hook writes)."""
        pending = self._pending(fn)
        await self._queue.put(pending)
        return await pending.future

    def _pending(self, fn: Job[T]) -> _Pending[T]:
        if self._pump is None or self._pump.done():
            raise StorageError("writer is not running")
        return _Pending(fn=fn, future=asyncio.get_running_loop().create_future())

    async def stop(self) -> None:
        """Drain what is queued, commit it, then close the connection."""
        await self.suspend()
        self._executor.shutdown(wait=True)

    async def suspend(self) -> None:
        """Drain and commit what is queued, then close the connection (submit now fails with 503).

        Used around maintenance that replaces the database file; ``resume`` reopens it.
        """
        if self._pump is not None and not self._pump.done():
            await self._queue.put(_STOP)
            await self._pump
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._close)

    async def resume(self) -> None:
        await self.start()

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.execute("PRAGMA busy_timeout=0")  # never wait for a straggling reader here
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:  # a reader still open: the WAL stays, which is safe
                log.debug("checkpoint at close skipped: %s", exc)
            self._conn.close()
            self._conn = None
        if self._journal is not None:
            self._journal.close()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        stopping = False
        while not stopping:
            item = await self._queue.get()
            batch: list[_Pending[Any]] = []
            while True:
                if item is _STOP:
                    stopping = True
                else:
                    batch.append(item)
                if stopping or len(batch) >= self._max_batch or self._queue.empty():
                    break
                item = self._queue.get_nowait()
            if batch:
                await loop.run_in_executor(self._executor, self._commit_batch, batch)
                _resolve(batch)

    def _commit_batch(self, batch: list[_Pending[Any]]) -> None:
        """Runs on the writer thread: one transaction, a savepoint per job, one commit."""
        conn = self._conn
        assert conn is not None
        records: list[dict[str, Any] | bytes] = []
        journaled = False
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in batch:
                records.extend(self._run_job(conn, job))
            if self._journal is not None:
                self._journal.append(records)
                journaled = True
            conn.execute("COMMIT")
        except (sqlite3.Error, OSError, DiskFull) as exc:
            if journaled and self._journal is not None:  # it holds committed batches only: take this one out
                self._journal.undo()
            self._fail_batch(conn, batch, exc)
            return
        self.stats.batches += 1
        self.stats.jobs += len(batch)

    def _run_job(self, conn: sqlite3.Connection, job: _Pending[Any]) -> list[dict[str, Any] | bytes]:
        tx = WriteTx(conn)
        conn.execute("SAVEPOINT job")
        try:
            job.result = job.fn(tx)
        except Exception as exc:  # a failing job fails alone; its error goes to its caller
            if _is_disk_full(exc):
                raise  # no job can commit on a full disk: the whole batch fails, cleanly, as DiskFull
            conn.execute("ROLLBACK TO job")
            conn.execute("RELEASE job")
            job.error = exc
            return []
        records = tx.records + row_journal.changed_rows(conn)  # inside the savepoint: a failed job journals nothing
        conn.execute("RELEASE job")
        return records

    def _fail_batch(self, conn: sqlite3.Connection, batch: list[_Pending[Any]], exc: Exception) -> None:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                log.exception("rollback after a failed commit also failed")
        error = _storage_error(exc)
        self.stats.failed_batches += 1
        self.stats.last_error = error.message
        log.error("group commit of %d jobs failed: %s", len(batch), exc)
        for job in batch:
            job.result, job.error = None, error


def _is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, DiskFull):
        return True
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL  # the primary code of an extended one
    return False


def _storage_error(exc: Exception) -> StorageError:
    if _is_disk_full(exc):
        err: StorageError = DiskFull("disk is full; nothing was stored", detail=str(exc))
    else:
        err = StorageError("the write could not be committed", detail=str(exc))
    err.__cause__ = exc
    return err


def _resolve(batch: list[_Pending[Any]]) -> None:
    for job in batch:
        if job.future.done():  # the caller went away (cancelled request)
            continue
        if job.error is not None:
            job.future.set_exception(job.error)
        else:
            job.future.set_result(job.result)


__all__ = ["Writer", "WriteTx", "WriterStats", "Job", "AiMemoryError"]
