"""The model worker: one process holds the model; a search never waits for an embedding batch."""

from __future__ import annotations

import threading
from pathlib import Path

from ai_memory.retrieval.model_worker import ModelWorker, RemoteModel, WorkerSpec
from ai_memory.retrieval.search import Query
from ai_memory.store.connection import open_write_connection
from ai_memory.store.migrations import migrate


def test_a_search_is_answered_while_a_batch_is_being_encoded(tmp_path: Path) -> None:
    db = tmp_path / "memory.sqlite"
    conn = open_write_connection(db)
    migrate(conn)
    conn.close()
    worker = ModelWorker(WorkerSpec(db, embed=True, model_dir=None, search_threads=1))
    worker.launch()
    try:
        assert worker.wait_ready(180)
        batches = RemoteModel(worker, "m", 384)
        batches.load()
        done = threading.Event()
        texts = [f"text number {i}: " + "the retry worker drains the invoice queue " * 40 for i in range(64)]
        encoding = threading.Thread(target=lambda: (batches.encode(texts), done.set()))
        encoding.start()
        answer = worker.answer(Query(q="why does the invoice worker retry?", k=5))
        assert answer is not None and not done.is_set()  # answered while the batch was still in the worker
        query_vector = RemoteModel(worker, "m", 384, for_queries=True).encode(["invoice retries"])
        assert query_vector.shape == (1, 384) and not done.is_set()
        encoding.join(timeout=600)
        assert done.is_set()
    finally:
        worker.stop()
