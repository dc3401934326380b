"""Where the ``user`` and ``audit`` verbs act: through the daemon when one serves the data dir
(it must learn of a new or revoked user at once, and it is the only writer while it runs), else
on the data dir itself, holding the serve lock so that no daemon starts meanwhile.

Offline, the CLI runs the very same ``Users`` registry on its own ``Writer``: the same jobs, the
same audit rows, and still one writer for the database.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from ai_memory.cli.common import client_from, config_from

if TYPE_CHECKING:
    from ai_memory.client.api import MemoryAPI
    from ai_memory.config import Config
    from ai_memory.coordination.users import Users
    from ai_memory.store.reader import Reader

T = TypeVar("T")


def daemon_api(args: argparse.Namespace) -> "MemoryAPI | None":
    """The daemon's API when one serves this data dir (or --url names one), else None."""
    from ai_memory.client.api import MemoryAPI
    from ai_memory.datadir import locked_pid

    config = config_from(args)
    if getattr(args, "url", None) or (config.data_dir.exists() and locked_pid(config.data_dir) is not None):
        return MemoryAPI(client_from(config))
    return None


def offline(args: argparse.Namespace, fn: Callable[["Users", "Reader"], Awaitable[T]]) -> T:
    """Run ``fn`` on the data dir with no daemon: serve lock held, schema migrated, one writer."""
    return asyncio.run(_offline(config_from(args), fn))


async def _offline(config: "Config", fn: Callable[["Users", "Reader"], Awaitable[T]]) -> T:
    from ai_memory import datadir
    from ai_memory.coordination.users import Users
    from ai_memory.store.reader import Reader
    from ai_memory.store.writer import Writer

    datadir.prepare(config.data_dir)
    lock = datadir.ServeLock(config.data_dir)
    lock.acquire()  # DataDirLocked if a daemon started since we looked: the user runs it again
    try:
        writer = Writer(config.db_path, config.sub("raw"), queue_size=16, max_batch=16)
        await writer.start()  # migrates the schema, like a daemon start
        reader = Reader(config.db_path, workers=1)
        try:
            return await fn(Users(datadir.read_token(config.token_path), writer, reader), reader)
        finally:
            reader.close()
            await writer.stop()
    finally:
        lock.release()
