"""A searching process multiplies vectors on its own thread: numpy's BLAS is held to one."""

from __future__ import annotations

import multiprocessing

from ai_memory.retrieval.vectors import single_threaded_blas


def _blas_threads_after_limit(out) -> None:  # in a fresh process, as a daemon is
    from threadpoolctl import threadpool_info

    import numpy  # noqa: F401  (loads OpenBLAS, one thread a core by default)

    before = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    single_threaded_blas()
    out.put((before, [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]))


def test_the_blas_of_a_searching_process_runs_on_one_thread() -> None:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    child = ctx.Process(target=_blas_threads_after_limit, args=(out,))
    child.start()
    before, after = out.get(timeout=60)
    child.join(timeout=60)
    assert before and after == [1] * len(before)
