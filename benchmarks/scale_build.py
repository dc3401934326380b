"""The offline builder behind ``benchmarks/scale.py``: a data dir of N pages and their sessions.

A million observations posted through ``/hook`` take hours on a shared 2-core machine, and
embedding their texts with the model as long again. This builds the same data dir without a
daemon, through the product's own storage code:

- **pages**: ``benchmarks/query.py``'s generator writes N page files into ``wiki/``, made a
  git repository with them as its first commit (``wiki.repo.ensure_repo``), then indexed by ``wiki.reindex.rebuild`` and ``swap_in`` (what ``ai-memory reindex`` runs);
- **observations**: every hook payload of ``scale.session_events`` goes through
  ``core.observation.build_observation`` (validation and the sanitizer, as ``/hook`` does) and
  ``store.observations.insert_observation``, submitted to the real ``store.writer.Writer``: group
  commit, the raw journal fsynced before each commit, the FTS rows in the same transaction;
- **vectors**: the embedding job's own ``find_pending`` and ``store_vectors`` (through the
  writer), with ``CachedVectors`` in place of the model: each text's vector is ``WordVectors``
  (a random projection of its bag of words: texts sharing words are near), and its piece
  vectors (late interaction) are the real tokenizer's word pieces with pseudo-random vectors.
  So the number and size of the vectors, sentences and piece vectors are the real ones, and
  they have neighbours, but they are not the model's: a query embedded by the model finds
  nothing by them (the text streams still do), and ``scale.py`` measures the quantized
  search's recall with queries made the same way.

Page chunks get their vectors the same way (``fill_page_vectors``), written into the database
before any daemon opens it; everything else goes through the writer or the rebuild's new file.
"""

from __future__ import annotations

import asyncio
import random
import re
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ai_memory.core.chunks import text_hash
from ai_memory.datadir import prepare
from ai_memory.embed.model import Tokens, packaged_model_dir
from ai_memory.ingest.hooks import project_of
from ai_memory.core.observation import build_observation
from ai_memory.retrieval.embedding_job import find_pending, store_vectors
from ai_memory.retrieval import late_interaction
from ai_memory.store.observations import insert_observation
from ai_memory.store.reader import Reader
from ai_memory.store.writer import Writer
from ai_memory.wiki.reindex import rebuild, swap_in
from ai_memory.wiki.repo import ensure_repo

MODEL_ID, DIM = "sentence-transformers/all-MiniLM-L6-v2", 384
WINDOW = 512        # observations in flight to the writer at once (its group commit drains them)
PENDING_ROWS = 512  # observations the embedding job's query looks at per batch


def unit_by_hash(digest: str, salt: int = 0) -> np.ndarray:
    v = np.random.default_rng([int(digest[:15], 16), salt]).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


class WordVectors:
    """A text's stand-in vector: the normalized sum of a fixed random vector per word (a random
    projection of its bag of words). Texts sharing words lie near each other, as embeddings of
    related texts do, so a nearest-neighbour search over them has an answer worth recalling,
    which independent random vectors (all about equally far) would not have."""

    def __init__(self) -> None:
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        v = self._words.get(word)
        if v is None:
            digest = text_hash(word)
            v = self._words[word] = np.random.default_rng(int(digest[:15], 16)).standard_normal(DIM).astype(np.float32)
        return v

    def __call__(self, text: str) -> np.ndarray:
        words = re.findall(r"[a-z0-9]+", text.lower())
        if not words:
            return unit_by_hash(text_hash(text))
        v = np.add.reduce([self._word(w) for w in words])
        return v / np.linalg.norm(v)


def fill_page_vectors(data: Path, words: WordVectors) -> int:
    """A vector for every chunk of the indexed pages, keyed by content hash as the job stores it."""
    db = data / "db" / "memory.sqlite"
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT content_hash, MIN(text) FROM chunks GROUP BY content_hash").fetchall()
        with conn:
            conn.executemany("INSERT OR IGNORE INTO embeddings(content_hash, model, dim, vector) VALUES (?,?,?,?)",
                             [(h, MODEL_ID, DIM, words(text).tobytes()) for h, text in rows])
        return len(rows)
    finally:
        conn.close()


class CachedVectors:
    """The ``Embedder`` protocol without the model: ``WordVectors`` for a text, pieces cut by
    the model's own tokenizer with random vectors. For building a large memory only."""

    model_id, dim = MODEL_ID, DIM

    def __init__(self, words: WordVectors) -> None:
        from tokenizers import Tokenizer

        self._tok = Tokenizer.from_file(str(packaged_model_dir() / "tokenizer.json"))
        self._tok.enable_truncation(256)
        self.words = words

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.words(t) for t in texts]) if texts else np.zeros((0, DIM), np.float32)

    def encode_tokens(self, texts: list[str]) -> list[Tokens]:
        found = []
        for text, enc in zip(texts, self._tok.encode_batch(texts)):
            pieces = tuple(p for p in enc.tokens if p not in ("[CLS]", "[SEP]"))
            digest = text_hash(text)
            vectors = np.stack([unit_by_hash(digest, i + 1) for i in range(len(pieces))]) if pieces else \
                np.zeros((0, DIM), np.float32)
            found.append(Tokens(pieces, vectors, self.words(text)))
        return found


def write_pages(data: Path, pages: int, generate: Any) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """The page files, committed to the wiki's repository, then indexed by the rebuild."""
    t0 = time.monotonic()
    prepare(data)
    specs = generate(data / "wiki", pages)
    ensure_repo(data / "wiki")  # a folder of notes made a wiki: its files are the first commit
    t1 = time.monotonic()
    db = data / "db" / "memory.sqlite"
    report = rebuild(data / "wiki", data / "raw", db)
    swap_in(Path(report.path), db)
    return specs, {"pages_written_s": round(t1 - t0, 1), "pages_indexed_s": round(time.monotonic() - t1, 1)}


async def _store_observations(writer: Writer, payloads: Any) -> int:
    stored, window = 0, []
    for payload in payloads:
        obs = build_observation(payload, agent="claude-code", event_hint=None,
                                received_at=datetime.now(timezone.utc), project_resolver=project_of)
        window.append(writer.submit_wait(insert_observation(obs)))
        if len(window) >= WINDOW:
            stored += len(await asyncio.gather(*window))
            window = []
    return stored + len(await asyncio.gather(*window))


async def _store_vectors(reader: Reader, writer: Writer, embedder: CachedVectors) -> int:
    """The embedding job's loop (``EmbeddingJob.run_once``), with bigger batches."""
    done, checked = 0, 0
    while True:
        pending = await reader.run(lambda c: find_pending(c, MODEL_ID, PENDING_ROWS, chunks_after=checked))
        if pending.is_empty():
            return done
        encoded = embedder.encode_tokens([text for _, text in pending.tokens]) if pending.tokens else []
        pooled = {digest: t.pooled for (digest, _), t in zip(pending.tokens, encoded)}
        vectors = np.stack([pooled[h] if h in pooled else embedder.words(text)
                            for h, text in zip(pending.hashes, pending.texts)]) \
            if pending.hashes else np.zeros((0, DIM), np.float32)
        pieces = [late_interaction.packed(digest, t) for (digest, _), t in zip(pending.tokens, encoded)]
        await writer.submit_wait(store_vectors(MODEL_ID, DIM, pending, vectors, pieces))
        done, checked = done + len(pending.hashes), pending.chunks_checked


def write_sessions(data: Path, sessions: int, session_events: Any, words: WordVectors) -> dict[str, float]:
    """``sessions`` coding sessions through the sanitizer and the writer, then their vectors."""
    db = data / "db" / "memory.sqlite"

    async def run() -> dict[str, float]:
        writer, reader = Writer(db, data / "raw"), Reader(db, workers=1)
        await writer.start()
        try:
            rng = random.Random(5)
            t0 = time.monotonic()
            stored = await _store_observations(writer, (e for n in range(sessions) for e in session_events(rng, n)))
            t1 = time.monotonic()
            vectors = await _store_vectors(reader, writer, CachedVectors(words))
            return {"observations": stored, "observations_s": round(t1 - t0, 1),
                    "observations_per_s": round(stored / max(t1 - t0, 1e-9), 1),
                    "texts_with_vectors": vectors, "vectors_s": round(time.monotonic() - t1, 1)}
        finally:
            await writer.stop()
            reader.close()

    return asyncio.run(run())
