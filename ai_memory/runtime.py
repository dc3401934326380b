"""The runtime: builds and owns every long-lived part of the daemon from a Config."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

from ai_memory import datadir
from ai_memory.config import Config
from ai_memory.core.errors import AiMemoryError
from ai_memory.ingest.spool import SpoolStats, drain_once
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer
from ai_memory.wiki.repo import ensure_repo

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """Everything the server and background tasks share; no module-level state anywhere."""

    config: Config
    token: str
    writer: Writer
    reader: Reader
    started_at: float = field(default_factory=time.time)
    spool: SpoolStats = field(default_factory=SpoolStats)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @classmethod
    def build(cls, config: Config) -> "Runtime":
        """Lay out the data dir (first start) and construct the parts; nothing runs yet."""
        datadir.prepare(config.data_dir)
        ensure_repo(config.sub("wiki"))
        writer = Writer(
            config.db_path,
            config.sub("raw"),
            queue_size=int(config.get("writer.queue_size")),
            max_batch=int(config.get("writer.max_batch")),
        )
        return cls(
            config=config,
            token=datadir.read_token(config.token_path),
            writer=writer,
            reader=Reader(config.db_path),
        )

    async def start(self) -> None:
        await self.writer.start()  # migrates the schema before any reader opens the file
        self._tasks.append(asyncio.create_task(self._drain_spool_forever(), name="spool-drain"))
        log.info("data dir %s ready", self.config.data_dir)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.writer.stop()
        self.reader.close()

    async def drain_spool(self) -> int:
        return await drain_once(
            self.writer, self.config.sub("spool"),
            max_files=int(self.config.get("spool.max_files")),
            max_age_days=float(self.config.get("spool.max_age_days")),
            stats=self.spool,
        )

    async def _drain_spool_forever(self) -> None:
        """Drain at start, then every spool.drain_interval_s; a failure waits for the next turn."""
        interval = float(self.config.get("spool.drain_interval_s"))
        while True:
            try:
                delivered = await self.drain_spool()
                if delivered:
                    log.info("spool: delivered %d events", delivered)
            except AiMemoryError as exc:
                log.warning("spool drain failed: %s", exc.message)
            await asyncio.sleep(interval)
