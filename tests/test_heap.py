"""The heap is trimmed once the work that frees most of it pauses: never while it runs."""

from __future__ import annotations

import threading
import time

from ai_memory.heap import IdleTrim
from wiki_helpers import wait_until


def test_the_heap_is_trimmed_once_work_pauses_and_never_while_it_runs() -> None:
    trims: list[tuple[int, float]] = []
    trimmed = threading.Event()

    def trim() -> None:
        trims.append((trimmer.busy, time.monotonic()))
        trimmed.set()

    trimmer = IdleTrim(quiet_s=0.05, trim=trim)
    with trimmer.working():
        with trimmer.working():  # ends first: its pause must not trim under the other
            pass
        trimmed.wait(0.5)  # a trim due 0.05 s after the first ended would land in here
        ended = time.monotonic()  # the work ends just after: no trim may come within 0.05 s of this
    wait_until(lambda: trims, timeout=5)
    assert [busy for busy, _ in trims] == [0]
    assert trims[0][1] >= ended + 0.05

    def burst() -> None:
        for _ in range(50):
            with trimmer.working():
                sum(range(1000))

    workers = [threading.Thread(target=burst) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    wait_until(lambda: len(trims) >= 2, timeout=5)
    assert all(busy == 0 for busy, _ in trims)


def test_each_pause_trims_once() -> None:
    trims: list[float] = []
    trimmer = IdleTrim(quiet_s=0.01, trim=lambda: trims.append(time.monotonic()))
    for pauses in (1, 2):
        with trimmer.working():
            pass
        wait_until(lambda n=pauses: len(trims) >= n, timeout=5)
    assert len(trims) == 2
