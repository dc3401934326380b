"""Read-only connections on their own threads: reads never wait for the writer or the loop."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from ai_memory.store.connection import open_read_connection

T = TypeVar("T")


class Reader:
    """A small pool of read-only connections, one per worker thread."""

    def __init__(self, db_path: Path, workers: int = 4) -> None:
        self._db_path = db_path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._generation = 0
        self._workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ai-memory-read")

    async def start_threads(self) -> None:
        """Start every reader thread now (a pool starts them as work comes): a thread inherits
        its creator's CPU priority, so threads started before the daemon lowers its own keep
        the normal one."""
        everyone = threading.Barrier(self._workers)
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self._executor, everyone.wait, 30.0) for _ in range(self._workers)))

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "generation", -1) != self._generation:
            conn = open_read_connection(self._db_path)
            self._local.conn = conn
            self._local.generation = self._generation
            with self._lock:
                self._connections.append(conn)
        return conn

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on a reader thread and await its result."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(self._conn()))

    def reset(self) -> None:
        """Close every connection; each worker opens a fresh one on its next read (a new file)."""
        with self._lock:
            self._generation += 1
            for conn in self._connections:
                conn.close()
            self._connections.clear()

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
