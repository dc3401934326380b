"""The background embedding job: vectors for page chunks and observations, never on the hook path.

It finds chunks and observations without a vector for the current model, encodes them in a
worker thread in batches, and stores the vectors through the writer. Vectors are keyed by the
SHA-256 of their text, so an unchanged chunk is never embedded twice (reindex reuses them).
A conversational turn also gets a vector per sentence and its piece vectors (for late
interaction); ``sentences_done`` says both are stored. An edit, a write, and the error lines
of a command's output get vectors too, of their passages that carry meaning
(``core.work_text``): the first is the observation's own vector, the others are stored like
a turn's sentences, so a session made of edits can be found by what its code means.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from ai_memory.core.chunks import text_hash
from ai_memory.core.errors import AiMemoryError
from ai_memory.core.utterance import CONVERSATIONAL_EVENTS, sentences
from ai_memory.core.work_text import tool_passages
from ai_memory.embed.model import Embedder
from ai_memory.retrieval import late_interaction
from ai_memory.store import embedding_queue
from ai_memory.store.cache_stamp import cache_stamp
from ai_memory.store.embeddings import has_vector, insert_embeddings
from ai_memory.store.token_vectors import has_pieces
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Job, Writer, WriteTx

log = logging.getLogger(__name__)
BATCH = 32  # small batches: the job yields the CPU often while ingest or queries are busy
# Events whose text says what the work was about: prompts, replies, compaction summaries; and
# the tool events whose passages carry meaning (edits, writes, failures). Other tool calls
# stay lexical (their titles and bodies are in the FTS index). A PreToolUse repeats its
# PostToolUse's input, so only the latter is read.
EMBEDDED_EVENTS = (*CONVERSATIONAL_EVENTS, "tool-failure")
TOOL_EVENTS = ("post-tool-use", "tool-failure")
# Sentences multiply the texts of a batch: stop taking observations once this many wait.
MAX_TEXTS = 96


def observation_text(title: str, body: str, event: str) -> str:
    if event in CONVERSATIONAL_EVENTS:
        return body[:2000] or title
    return f"{title}\n{body[:500]}"


@dataclass
class Pending:
    hashes: list[str]
    texts: list[str]
    obs: list[tuple[int, str]]  # (observation rowid, hash)
    skip_obs: list[int]
    sentences: list[tuple[int, int, str]] = field(default_factory=list)  # (observation rowid, ord, hash)
    split: list[int] = field(default_factory=list)  # observations that only needed their sentences
    tokens: list[tuple[str, str]] = field(default_factory=list)  # (hash, text) of turns needing piece vectors
    # Every chunk with an id up to this one has a vector once the batch is stored. That stays
    # true because vectors are never deleted and only the writer adds chunks to the live file;
    # whatever breaks either (a vector prune, another model) must ``EmbeddingJob.reset`` too.
    chunks_checked: int = 0

    def is_empty(self) -> bool:
        return not (self.hashes or self.obs or self.skip_obs or self.split)

    def add_turn(self, conn: sqlite3.Connection, model: str, rowid: int, text: str, seen: set[str]) -> None:
        """A conversational turn's sentences and piece vectors, unless stored or queued."""
        for ord_, sentence in enumerate(sentences(text)):
            self.sentences.append((rowid, ord_, self.want(conn, model, sentence, seen)))
        self.want_pieces(conn, model, text, seen)

    def want_pieces(self, conn: sqlite3.Connection, model: str, text: str, seen: set[str]) -> None:
        """The text's piece vectors (late interaction), unless stored or queued."""
        digest = text_hash(text)
        if f"tokens:{digest}" not in seen:
            seen.add(f"tokens:{digest}")
            if not has_pieces(conn, digest, model):
                self.tokens.append((digest, text))

    def add_passages(self, conn: sqlite3.Connection, model: str, rowid: int, passages: list[str],
                     seen: set[str]) -> None:
        """A tool event's passages: the first is its own vector (with its pieces, so it is matched
        word by word like a turn), the rest are kept as its sentences."""
        self.obs.append((rowid, self.want(conn, model, passages[0], seen)))
        self.want_pieces(conn, model, passages[0], seen)
        for ord_, passage in enumerate(passages[1:]):
            self.sentences.append((rowid, ord_, self.want(conn, model, passage, seen)))

    def want(self, conn: sqlite3.Connection, model: str, text: str, seen: set[str]) -> str:
        """The text's hash, queueing the text for encoding unless a vector exists or is queued."""
        digest = text_hash(text)
        if digest not in seen:
            seen.add(digest)
            if not has_vector(conn, digest, model):
                self.hashes.append(digest)
                self.texts.append(text)
        return digest


def find_pending(conn: sqlite3.Connection, model: str, limit: int = BATCH, chunks_after: int = 0) -> Pending:
    """What the next batch embeds. Chunks are looked for above ``chunks_after`` only: every chunk
    at or below it had a vector when it was last looked at (``Pending.chunks_checked``); a scan
    of every chunk cost 0.3 s a batch at 100,000 pages."""
    pending = Pending([], [], [], [], chunks_checked=chunks_after)
    newest = embedding_queue.newest_chunk_id(conn)
    rows = embedding_queue.chunks_without_vector(conn, model, chunks_after, newest, limit)
    seen: set[str] = set()
    for _, digest, text in rows:
        if digest not in seen:
            seen.add(digest)
            pending.hashes.append(digest)
            pending.texts.append(text)
    # Ids are never reused and are given in order by the one writer, so no chunk at or below
    # the last one read can appear later: once this batch is stored, they all have vectors.
    pending.chunks_checked = rows[-1][0] if len(rows) == limit else max(newest, chunks_after)
    for rowid, title, body, event, tool, payload in embedding_queue.observations_without_vector(
            conn, TOOL_EVENTS, limit):
        passages = tool_passages(tool or "", json.loads(cast(str, payload))) if event in TOOL_EVENTS else []
        if event not in EMBEDDED_EVENTS and not passages:
            pending.skip_obs.append(rowid)
            continue
        if len(pending.texts) >= MAX_TEXTS:
            break  # the rest waits for the next batch
        if passages:
            pending.add_passages(conn, model, rowid, passages, seen)
            continue
        text = observation_text(title, body, event)
        pending.obs.append((rowid, pending.want(conn, model, text, seen)))
        if event in CONVERSATIONAL_EVENTS:
            pending.add_turn(conn, model, rowid, text, seen)
    # Observations stored before sentence and piece vectors existed get them too, newest first,
    # whenever a batch has room: their whole-text vectors stay linked meanwhile.
    for rowid, title, body, event in embedding_queue.observations_without_sentences(conn, limit):
        if len(pending.texts) >= MAX_TEXTS:
            break
        pending.split.append(rowid)
        if event in CONVERSATIONAL_EVENTS:
            pending.add_turn(conn, model, rowid, observation_text(title, body, event), seen)
    return pending


def store_vectors(model: str, dim: int, pending: Pending, vectors: np.ndarray,
                  tokens: Sequence[late_interaction.Pieces] = ()) -> Job[int]:
    """The writer job storing a batch: vectors, piece vectors, sentences, and which
    observations are done."""
    def job(tx: WriteTx) -> int:
        insert_embeddings(tx.conn, model, dim,
                          [(h, v.astype(np.float32).tobytes()) for h, v in zip(pending.hashes, vectors)])
        for pieces in tokens:
            late_interaction.store(tx.conn, model, pieces)
        embedding_queue.record_sentences(tx.conn, pending.sentences)
        embedding_queue.mark_embedded(tx.conn, pending.obs)
        embedding_queue.mark_without_vector(tx.conn, pending.skip_obs)
        embedding_queue.mark_sentences_done(tx.conn, pending.split)
        return len(pending.hashes)

    return job


# Between wake-ups, how long the job waits before looking for text to embed anyway. New text is
# announced (``wake``: a stored event, an indexed page), so looking is only the safety net.
IDLE_LOOK_S = 30.0


def lower_thread_priority(steps: int) -> None:
    """Lower the calling thread's CPU priority by ``steps``: on Linux a nice value is a thread's,
    and the threads it starts from then on inherit it."""
    if steps <= 0:
        return
    try:
        os.nice(steps)
    except OSError as exc:
        log.warning("could not lower a thread's CPU priority: %s", exc)


@dataclass(frozen=True)
class ChunksChecked:
    """Every chunk up to ``chunk_id`` of database file ``file_id`` had a vector when looked at."""

    file_id: str
    chunk_id: int

    def after(self, file_id: str) -> int:
        """Where a look at ``file_id`` starts: another file's chunk ids say nothing of it."""
        return self.chunk_id if file_id == self.file_id else 0


class EmbeddingJob:
    """Owns the loop; ``wake`` ends the wait once new text arrives."""

    def __init__(self, embedder: Embedder, reader: Reader, writer: Writer, idle_s: float = IDLE_LOOK_S,
                 query_embedder: Embedder | None = None, nice: int = 0) -> None:
        self.embedder = embedder
        # A second instance for queries (a tokenizer of its own over the same model), loaded with the first.
        self.query_embedder = query_embedder or embedder
        # Batches are made on one thread of their own, ``nice`` steps below the priority of
        # searches: word pieces, pooling and the pieces kept for late interaction (the model's
        # passes run on its own threads, a query's beside a batch's).
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="embed", initializer=lower_thread_priority,
                                          initargs=(nice,))
        self._reader = reader
        self._writer = writer
        self._idle = idle_s
        self._wake = asyncio.Event()
        self.embedded = 0
        self.ready = False
        # see find_pending: the chunk id up to which every chunk had a vector, in which database
        # file (a reindex makes another, whose chunk ids start again)
        self._checked = ChunksChecked("", 0)
        self.error: str | None = None

    def wake(self) -> None:
        self._wake.set()

    async def run_once(self) -> int:
        model, checked = self.embedder.model_id, self._checked

        def find(conn: sqlite3.Connection) -> tuple[str, Pending]:
            file_id = cache_stamp(conn).file_id
            return file_id, find_pending(conn, model, chunks_after=checked.after(file_id))

        file_id, pending = await self._reader.run(find)
        if pending.is_empty():
            self._checked = ChunksChecked(file_id, pending.chunks_checked)
            return 0
        loop = asyncio.get_running_loop()
        vectors, tokens = await loop.run_in_executor(self._thread, self._encode, pending)
        await self._writer.submit_wait(store_vectors(model, self.embedder.dim, pending, vectors, tokens))
        self._checked = ChunksChecked(file_id, pending.chunks_checked)
        self.embedded += len(pending.hashes)
        return len(pending.hashes) + len(pending.obs) + len(pending.skip_obs) + len(pending.split)

    def _encode(self, pending: Pending) -> tuple[np.ndarray, list[late_interaction.Pieces]]:
        """The batch's vectors (a row per queued text) and the queued turns' pieces. A turn that
        needs both gets them from one pass of the model: its vector is the pieces' pooling."""
        encoded = self.embedder.encode_tokens([text for _, text in pending.tokens]) if pending.tokens else []
        pooled = {digest: tokens.pooled for (digest, _), tokens in zip(pending.tokens, encoded)}
        rest = [text for digest, text in zip(pending.hashes, pending.texts) if digest not in pooled]
        rest_vectors = iter(self.embedder.encode(rest) if rest else [])
        vectors = np.zeros((len(pending.hashes), self.embedder.dim), dtype=np.float32)
        for row, digest in enumerate(pending.hashes):
            vectors[row] = pooled[digest] if digest in pooled else next(rest_vectors)
        pieces = [late_interaction.packed(digest, tokens) for (digest, _), tokens in zip(pending.tokens, encoded)]
        return vectors, pieces

    async def run(self) -> None:
        try:
            await self._serve()
        finally:
            self._thread.shutdown(wait=False, cancel_futures=True)  # a pass is short: never waited for

    async def _serve(self) -> None:
        try:
            # on a reader thread: started before the daemon lowered its priority, so the threads
            # the runtime starts as it loads, where queries' passes run, keep the normal one
            await self._reader.run(lambda _conn: self._load())
        except AiMemoryError as exc:
            self.error = f"{exc.message} ({exc.detail})" if exc.detail else exc.message
            log.error("embeddings disabled: %s", self.error)
            return
        while True:
            try:
                done = await self.run_once()
            except Exception:  # logged; the next turn tries again
                log.exception("embedding batch failed")
                done = 0
            if not done:
                self._wake.clear()
                try:
                    async with asyncio.timeout(self._idle):  # not wait_for: it can swallow a cancel on 3.11
                        await self._wake.wait()
                except asyncio.TimeoutError:
                    pass

    def _load(self) -> None:
        for model in {id(m): m for m in (self.embedder, self.query_embedder)}.values():
            load = getattr(model, "load", None)
            if load is not None:
                load()
        self.ready = True
        log.info("embedding model %s loaded", self.embedder.model_id)

    async def describe(self) -> dict[str, Any]:
        """What ``status`` shows of the job: its model, whether it is ready, and what waits."""
        return {"enabled": True, "model": self.embedder.model_id, "ready": self.ready, "error": self.error,
                "precision": getattr(self.embedder, "precision", None),
                "embedded": self.embedded, "backlog": await self.backlog()}

    async def backlog(self) -> dict[str, int]:
        model, checked = self.embedder.model_id, self._checked

        def count(conn: sqlite3.Connection) -> dict[str, int]:
            chunks = embedding_queue.chunks_waiting(conn, model, checked.after(cache_stamp(conn).file_id))
            return {"chunks": chunks, "observations": embedding_queue.observations_waiting(conn)}

        return await self._reader.run(count)
