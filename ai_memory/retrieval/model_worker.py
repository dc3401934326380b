"""The model worker: one process beside the daemon that holds the only copy of torch and the
embedding model, and answers both searches and the embedding job's batches.

Why a process: under a burst of hooks the daemon's event loop (parsing, sanitizing) and its
writer thread want the GIL and the CPU; a search in a process of its own is scheduled on a free
core and never waits for them. Why one: torch and the model cost ~300 MB resident, so a second
copy in the daemon for embedding (as there was) doubled the daemon's footprint.

Inside the worker, searches run on ``search_threads`` threads at normal priority; embedding
batches run on one thread whose CPU priority is lowered (``nice``, per thread on Linux) and
whose tokenizer is its own, over the same weights. A search therefore waits only for other
searches, never for a batch (invariant 7). Messages on the pipe carry an id, so a search and a
batch are in flight at once.

The daemon side (``ModelWorker``) answers ``None`` while the worker loads or after it was lost
(the caller then searches in process, without vectors), and starts a new worker after a loss,
from a thread that kept the daemon's normal priority.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import queue
import signal
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import count
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ai_memory.core.errors import AiMemoryError
from ai_memory.heap import bound_heap, idle_trim
from ai_memory.retrieval.search import Answer, Query, Retriever
from ai_memory.retrieval.vectors import VectorIndex, single_threaded_blas

log = logging.getLogger(__name__)
READY_TIMEOUT_S = 180.0
ANSWER_TIMEOUT_S = 60.0
ENCODE_TIMEOUT_S = 600.0
STOP_GRACE_S = 0.3  # per step of stopping a worker (pipe closed, then SIGTERM, then SIGKILL)


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process needs to build its own retriever and model (picklable)."""

    db_path: Path
    embed: bool
    model_dir: Path | None
    embed_threads: int = 1
    search_threads: int = 1
    embed_nice: int = 5
    embed_precision: str = "auto"


class _Serving:
    """The worker process's state: the model (one copy), a retriever, one connection per thread."""

    def __init__(self, conn: Connection, spec: WorkerSpec) -> None:
        self.conn, self.spec = conn, spec
        self.send_lock = threading.Lock()
        self.batch_model = self.query_model = None
        self.model_error: str | None = None
        if spec.embed:
            from ai_memory.embed.model import MiniLM

            try:
                batch = MiniLM(spec.model_dir, spec.embed_threads, spec.embed_precision)
                batch.load()
                query = batch.sibling()  # its own tokenizer, the same weights
                query.load()
                self.batch_model, self.query_model = batch, query
            except AiMemoryError as exc:  # searches still work, without vectors; the daemon reports it
                self.model_error = f"{exc.message} ({exc.detail})" if exc.detail else exc.message
        index = (VectorIndex(self.query_model.model_id, self.query_model.dim, codes_dir=spec.db_path.parent)
                 if self.query_model else None)
        self.retriever = Retriever(self.query_model, index, ready=lambda: self.query_model is not None)
        self.local = threading.local()
        self.generation = 0  # bumped by a reset: every thread reopens its connection
        self.warm = False
        self.searches = ThreadPoolExecutor(max(1, spec.search_threads), thread_name_prefix="search")
        self.batches = ThreadPoolExecutor(1, thread_name_prefix="embed", initializer=_lower_priority,
                                          initargs=(spec.embed_nice,))

    def reply(self, rid: int, status: str, payload: Any) -> None:
        with self.send_lock:
            self.conn.send((rid, status, payload))

    def db(self):
        from ai_memory.store.connection import open_read_connection

        if getattr(self.local, "generation", None) != self.generation:
            if getattr(self.local, "db", None) is not None:
                self.local.db.close()
            self.local.db, self.local.generation = open_read_connection(self.spec.db_path), self.generation
        return self.local.db

    def run(self, rid: int, kind: str, payload: Any) -> None:
        try:
            with idle_trim().working():  # what searches and batches free goes back once they pause
                result = self._answer(kind, payload)
        except Exception as exc:  # reported to the daemon, which decides what to do
            self.reply(rid, "error", f"{type(exc).__name__}: {exc}")
            return
        self.reply(rid, "ok", result)

    def _answer(self, kind: str, payload: Any) -> Any:
        if kind == "query":
            query, now = payload
            result = self.retriever.answer(self.db(), query, now)
            if not self.warm:  # what the first search loaded lazily lives as long
                self.warm = True
                gc.collect()  # its garbage is not frozen with it
                gc.freeze()
            return result
        if kind in ("encode", "encode_tokens", "encode_query"):
            if self.batch_model is None or self.query_model is None:
                raise RuntimeError("embeddings are disabled")
            model = self.query_model if kind == "encode_query" else self.batch_model
            return model.encode_tokens(payload) if kind == "encode_tokens" else model.encode(payload)
        raise ValueError(f"unknown request {kind!r}")

    def loop(self) -> None:
        while True:
            try:
                rid, kind, payload = self.conn.recv()
            except (EOFError, OSError):
                return
            if kind == "reset":  # the database file was replaced by a reindex
                self.generation += 1
                self.retriever.reset()
                self.reply(rid, "ok", None)
                continue
            pool = self.batches if kind in ("encode", "encode_tokens") else self.searches
            pool.submit(self.run, rid, kind, payload)


def _serve(conn: Connection, spec: WorkerSpec) -> None:
    """The worker process: load, say ready, answer until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon decides when we stop
    bound_heap()
    single_threaded_blas()
    serving = _Serving(conn, spec)
    _long_lived_heap()
    precision = serving.batch_model.precision if serving.batch_model is not None else None
    conn.send((0, "ready", (serving.model_error, precision)))
    serving.loop()
    os._exit(0)  # the pools' threads hold nothing worth a clean interpreter exit


def _long_lived_heap() -> None:
    """The model, torch and every module loaded so far live as long as the process: out of every
    collection from now on. Unfrozen, a full collection walked their ~190,000 objects in 150-300 ms,
    in the middle of a search, every few dozen searches; and with the first generation's
    default threshold (700 allocations) a search paid for seven collections. A search makes
    tens of thousands of short-lived objects, freed by their reference counts, not by a
    collection."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 100)


def _lower_priority(steps: int) -> None:
    if steps > 0:
        try:
            os.nice(steps)
        except OSError:
            pass


class _Process:
    """One worker process and the daemon's end of its pipe: requests by id, answers to futures."""

    def __init__(self, spec: WorkerSpec) -> None:
        ctx = multiprocessing.get_context("spawn")  # never fork a process that holds threads and torch
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, spec), name="ai-memory-model", daemon=True)
        self.process.start()
        child.close()
        self._ids = count(1)
        self._send = threading.Lock()
        self._waiting: dict[int, Future[Any]] = {}
        self._lost = False

    def wait_ready(self) -> tuple[str | None, str | None]:
        """Wait for the worker to load; what went wrong loading the model, if anything, and the
        precision its weights are held in."""
        if not self.conn.poll(READY_TIMEOUT_S):
            raise TimeoutError("the model worker did not start")
        _, status, (model_error, precision) = self.conn.recv()
        if status != "ready":
            raise RuntimeError(f"the model worker said {status}")
        threading.Thread(target=self._receive, name="model-worker-answers", daemon=True).start()
        return model_error, precision

    def _receive(self) -> None:
        while True:
            try:
                rid, status, payload = self.conn.recv()
            except (EOFError, OSError):
                break
            future = self._waiting.pop(rid, None)
            if future is not None:
                future.set_result((status, payload))
        with self._send:
            self._lost = True
            waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            future.set_exception(EOFError("the model worker is gone"))

    def call(self, kind: str, payload: Any, timeout: float) -> Any:
        """Blocking: the answer, RuntimeError when the worker raised, EOFError/OSError when lost."""
        future: Future[Any] = Future()
        with self._send:
            if self._lost:
                raise EOFError("the model worker is gone")
            rid = next(self._ids)
            self._waiting[rid] = future
            self.conn.send((rid, kind, payload))
        status, answer = future.result(timeout)
        if status == "error":
            raise RuntimeError(answer)
        return answer

    def stop(self) -> None:
        """Close the pipe (an idle worker returns at once) and end it if it does not; it holds a
        read-only connection only, so ending it loses nothing."""
        self.conn.close()
        for end in (lambda: None, self.process.terminate, self.process.kill):
            end()
            self.process.join(timeout=STOP_GRACE_S)
            if not self.process.is_alive():
                return


class ModelWorker:
    """The daemon's handle on the worker; ``answer`` returns None when it cannot take a query."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self._current: _Process | None = None  # ready to answer
        self._starting: _Process | None = None
        self.model_error: str | None = None
        self.precision: str | None = None  # of the model's weights, once loaded
        self._launches: queue.Queue[bool] = queue.Queue()
        self._ready = threading.Event()
        self._stopping = False
        self.restarts = 0

    def describe(self) -> dict[str, Any]:
        """For /status: the worker's pid, whether it serves, its threads."""
        current = self._current
        return {"configured": 1, "ready": int(current is not None), "pids": [current.process.pid] if current else [],
                "search_threads": self.spec.search_threads, "restarts": self.restarts}

    def launch(self) -> None:
        """Start the launcher thread from the calling thread, before the daemon lowers its
        priority: the worker, and any worker started after a loss, keep the normal one."""
        threading.Thread(target=self._launcher, name="model-worker-launcher", daemon=True).start()
        self._launches.put(True)

    def _launcher(self) -> None:
        while self._launches.get() and not self._stopping:
            try:
                process = self._starting = _Process(self.spec)
            except OSError as exc:
                log.error("cannot start the model worker, searches stay in process: %s", exc)
                continue
            try:
                self.model_error, self.precision = process.wait_ready()
            except (OSError, RuntimeError, TimeoutError, EOFError) as exc:
                log.error("model worker unavailable, searches stay in process: %s", exc)
                process.stop()
                continue
            finally:
                self._starting = None
            if self._stopping:
                process.stop()
                return
            if self.model_error:
                log.error("embeddings disabled: %s", self.model_error)
            self._current = process
            self._ready.set()
            log.info("model worker ready (pid %d)", process.process.pid)

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    def call(self, kind: str, payload: Any, timeout: float) -> Any:
        """Blocking, from a thread; raises EOFError when there is no worker (a lost one is replaced)."""
        process = self._current
        if process is None:
            raise EOFError("no model worker")
        try:
            return process.call(kind, payload, timeout)
        except (EOFError, OSError, TimeoutError) as exc:
            self._lose(process, exc)
            raise EOFError(f"the model worker was lost: {exc}") from exc

    def _lose(self, process: _Process, exc: BaseException) -> None:
        if self._current is not process:
            return
        self._current = None
        self._ready.clear()
        log.error("model worker lost (%s); searches continue in process until it is replaced", exc)
        process.stop()
        if not self._stopping:
            self.restarts += 1
            self._launches.put(True)

    def answer(self, query: Query) -> Answer | None:
        """Blocking: the worker's answer, or None (loading, lost, or it raised)."""
        try:
            return self.call("query", (query, datetime.now(timezone.utc)), ANSWER_TIMEOUT_S)
        except RuntimeError as exc:  # the retriever raised in the worker; the worker itself is fine
            log.warning("model worker could not answer (%s); answering in process", exc)
        except EOFError:
            pass
        return None

    def reset(self) -> None:
        """The worker reopens the database (after a reindex swapped the file)."""
        try:
            self.call("reset", None, ANSWER_TIMEOUT_S)
        except (EOFError, RuntimeError) as exc:
            log.error("model worker could not reopen the database (%s)", exc)
            if self._current is not None:
                self._lose(self._current, exc)

    def stop(self) -> None:
        self._stopping = True
        self._launches.put(False)
        for process in (self._starting, self._current):
            if process is not None:
                process.stop()
        self._current = None


class RemoteModel:
    """The ``Embedder`` the daemon uses when the worker holds the model: batches go to the
    worker's embedding thread, a query (``for_queries``) to its search threads."""

    def __init__(self, worker: ModelWorker, model_id: str, dim: int, for_queries: bool = False) -> None:
        self.model_id, self.dim = model_id, dim
        self._worker = worker
        self._queries = for_queries

    def load(self) -> None:
        """Waits for the worker (the embedding job calls this before its first batch); raises
        ModelError when the worker could not load the model."""
        from ai_memory.embed.model import ModelError

        while not self._worker.wait_ready(READY_TIMEOUT_S):
            log.warning("still waiting for the model worker")
        if self._worker.model_error:
            raise ModelError(self._worker.model_error)

    @property
    def precision(self) -> str | None:
        return self._worker.precision

    def encode(self, texts: list[str]):
        return self._worker.call("encode_query" if self._queries else "encode", texts, ENCODE_TIMEOUT_S)

    def encode_tokens(self, texts: list[str]):
        if self._queries:  # a search's own pass: on a search thread, never behind a batch
            raise NotImplementedError("queries are answered in the worker")
        return self._worker.call("encode_tokens", texts, ENCODE_TIMEOUT_S)
