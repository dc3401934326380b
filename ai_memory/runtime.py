"""The runtime: builds and owns every long-lived part of the daemon from a Config."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from ai_memory import datadir
from ai_memory.config import Config
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
        log.info("data dir %s ready", self.config.data_dir)

    async def stop(self) -> None:
        await self.writer.stop()
        self.reader.close()
