"""Answering searches in a separate process, so ingestion never slows a search down.

The daemon is one Python process: under a burst of hooks, the event loop (parsing, sanitizing),
the writer thread and the embedding job all want the GIL, and a search on a reader thread gets
only its share of it. A query worker is a process of its own with its own read-only connection,
vector cache and query model: the operating system schedules it on a free core, and reads
truly never wait for writes. A worker that is not ready (loading its model) or has died leaves
the search to the in-process path, so a search is never refused.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ai_memory.retrieval.search import Answer, Query, Retriever
from ai_memory.retrieval.vectors import VectorIndex

log = logging.getLogger(__name__)
READY_TIMEOUT_S = 180.0
ANSWER_TIMEOUT_S = 60.0
STOP_GRACE_S = 0.3  # per step of stopping a worker (pipe closed, then SIGTERM, then SIGKILL)


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process needs to build its own retriever (picklable)."""

    db_path: Path
    embed: bool
    model_dir: Path | None


def _serve(conn: Connection, spec: WorkerSpec) -> None:
    """The worker process: build a retriever, say ready, answer until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon decides when we stop
    from ai_memory.store.connection import open_read_connection

    embedder, index = None, None
    if spec.embed:
        from ai_memory.embed.model import MiniLM

        embedder = MiniLM(spec.model_dir, 1)
        embedder.load()
        index = VectorIndex(embedder.model_id, embedder.dim)
    retriever = Retriever(embedder, index, ready=lambda: embedder is not None)
    db = open_read_connection(spec.db_path)
    conn.send(("ready", None))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "reset":  # the database file was replaced by a reindex
            db.close()
            db = open_read_connection(spec.db_path)
            retriever.reset()
            conn.send(("ok", None))
            continue
        query, now = payload
        try:
            conn.send(("ok", retriever.answer(db, query, now)))
        except Exception as exc:  # reported to the daemon, which answers in-process instead
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class _Worker:
    def __init__(self, spec: WorkerSpec) -> None:
        ctx = multiprocessing.get_context("spawn")  # never fork a process that holds threads and torch
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, spec), name="ai-memory-query", daemon=True)
        self.process.start()
        child.close()
        self.lock = threading.Lock()  # one request in flight per pipe

    def roundtrip(self, message: tuple[str, Any], timeout: float) -> Any:
        with self.lock:
            self.conn.send(message)
            if not self.conn.poll(timeout):
                raise TimeoutError("query worker did not answer")
            status, payload = self.conn.recv()
        if status == "error":
            raise RuntimeError(payload)
        return payload

    def wait_ready(self) -> None:
        if not self.conn.poll(READY_TIMEOUT_S):
            raise TimeoutError("query worker did not start")
        status, _ = self.conn.recv()
        if status != "ready":
            raise RuntimeError(f"query worker said {status}")

    def stop(self) -> None:
        """Close the pipe (an idle worker returns at once) and end it if it does not: a worker
        still loading the model would only notice once loaded, seconds later, and it holds a
        read-only connection, so ending it loses nothing."""
        self.conn.close()
        self.process.join(timeout=STOP_GRACE_S)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=STOP_GRACE_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=STOP_GRACE_S)


class QueryWorkers:
    """A small pool of worker processes; ``answer`` returns None when none can take the query."""

    def __init__(self, spec: WorkerSpec, count: int) -> None:
        self._spec = spec
        self._count = count
        self._idle: asyncio.Queue[_Worker] | None = None
        self._all: list[_Worker] = []  # ready to answer
        self._launched: list[_Worker] = []

    def describe(self) -> dict[str, Any]:
        """For /status: how many were asked for, how many serve, their pids."""
        return {"configured": self._count, "ready": len(self._all), "pids": [w.process.pid for w in self._all]}

    def launch(self) -> None:
        """Start the processes now, from the calling thread (they inherit its CPU priority);
        ``start`` then waits for them to load."""
        for _ in range(self._count):
            try:
                self._launched.append(_Worker(self._spec))
            except OSError as exc:
                log.error("cannot start a query worker, searches stay in process: %s", exc)

    async def start(self) -> None:
        """Wait in the background for the launched workers; searches use each once it is ready."""
        self._idle = asyncio.Queue()
        for worker in self._launched:
            try:
                await asyncio.to_thread(worker.wait_ready)
            except (OSError, RuntimeError, TimeoutError, EOFError) as exc:
                log.error("query worker unavailable, searches stay in process: %s", exc)
                await asyncio.to_thread(worker.stop)
                continue
            self._all.append(worker)
            self._idle.put_nowait(worker)
        log.info("%d query worker process(es) ready", len(self._all))

    async def answer(self, query: Query) -> Answer | None:
        if self._idle is None:
            return None
        try:  # a busy (or lost) worker never makes a search wait: it runs in process instead
            worker = self._idle.get_nowait()
        except asyncio.QueueEmpty:
            return None
        if worker not in self._all:  # stopped by a failed reset while it sat in the queue
            return None
        healthy = True
        try:
            return await asyncio.to_thread(worker.roundtrip, ("query", (query, datetime.now(timezone.utc))),
                                           ANSWER_TIMEOUT_S)
        except RuntimeError as exc:  # the retriever raised in the worker; the worker itself is fine
            log.warning("query worker could not answer (%s); answering in process", exc)
            return None
        except (OSError, EOFError, TimeoutError) as exc:  # dead, or its pipe holds a late answer now
            healthy = False
            log.error("query worker lost (%s); searches continue in process", exc)
            return None
        finally:
            if healthy:
                self._idle.put_nowait(worker)
            elif worker in self._all:
                self._all.remove(worker)
                await asyncio.to_thread(worker.stop)

    async def reset(self) -> None:
        """Every worker reopens the database (after a reindex swapped the file); a worker that
        cannot is stopped, since it would keep reading the old file."""
        for worker in list(self._all):
            try:
                await asyncio.to_thread(worker.roundtrip, ("reset", None), ANSWER_TIMEOUT_S)
            except (OSError, EOFError, TimeoutError, RuntimeError) as exc:
                log.error("query worker could not reopen the database (%s); stopping it", exc)
                self._all.remove(worker)
                await asyncio.to_thread(worker.stop)

    def stop(self) -> None:
        workers = list({id(w): w for w in self._all + self._launched}.values())
        for worker in workers:  # every pipe first: idle workers then all return at once
            worker.conn.close()
        for worker in workers:
            worker.stop()
        self._all.clear()
