"""The C allocator's settings for a long-lived process (glibc; elsewhere they do nothing).

glibc gives each thread that allocates its own arena, up to eight a core, and each arena keeps
what it once held; it also raises its mmap threshold after each large free, so the heap then
holds a large buffer's peak (a batch's activations) for the life of the process. A daemon whose
threads take turns handling hooks, reads and writes grows that way without holding more.
"""

from __future__ import annotations

import ctypes

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def bound_heap(arenas: int = 2) -> None:
    """Large buffers (1 MiB and more) mapped and unmapped, never kept in the heap; ``arenas``
    arenas for all the process's threads."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 20)
        libc.mallopt(M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # not glibc: its allocator does its own thing
        pass


def trim_heap() -> None:
    """Give the pages freed since back to the system (glibc keeps them otherwise). On a large,
    fragmented heap this takes tens of milliseconds: never on an event loop."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
