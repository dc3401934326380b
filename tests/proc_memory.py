"""Resident memory of a process from /proc (no psutil dependency)."""

from __future__ import annotations

import os


def of(pid: int) -> int:
    """Resident set size in bytes of ``pid``."""
    with open(f"/proc/{pid}/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")
