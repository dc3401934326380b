"""A wiki on a data dir no daemon serves, for the verbs that change it from the CLI (sync, the
project lifecycle): this process is then the one writer, and the caller holds the serve lock so
that no daemon starts meanwhile."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ai_memory.config import Config
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer
from ai_memory.wiki.git import Committer
from ai_memory.wiki.projects import ProjectLifecycle
from ai_memory.wiki.repo import ensure_repo
from ai_memory.wiki.service import Wiki


@asynccontextmanager
async def offline_wiki(config: Config) -> AsyncIterator[Wiki]:
    """The data dir's wiki with a writer of its own (the schema migrated, a project verb a crash
    cut short finished, the index reconciled with the files first); what waits for a commit is
    committed at the end."""
    wiki_dir = config.sub("wiki")
    ensure_repo(wiki_dir)
    writer = Writer(config.db_path, config.sub("raw"), queue_size=config.writer.queue_size,
                    max_batch=config.writer.max_batch)
    reader = Reader(config.db_path)
    wiki = Wiki(wiki_dir, writer, reader, Committer(wiki_dir, config.wiki.commit_window_s))
    await writer.start()
    try:
        await ProjectLifecycle(wiki).finish_interrupted()  # a verb a crash cut short, before anything else
        await wiki.reconcile()
        yield wiki
    finally:
        await wiki.committer.flush()
        reader.close()
        await writer.stop()
