"""Killing a process at a point of its work: after its N-th change to a folder tree (by step), or
after T seconds (by time). Steps are read from the kernel (inotify, through libc), so the process
under test carries no hook of ours; the kill follows the step within a millisecond or so."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import signal
import struct
import threading
from pathlib import Path

IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x8, 0x40, 0x80, 0x100, 0x200
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
CHANGES = IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
_EVENT = struct.Struct("iIII")

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


class Steps:
    """Counts changes (a file written, created, removed or moved) in every folder of ``root``
    that exists now, ``.git`` and its refs included, and kills ``pid`` with SIGKILL at change
    ``kill_at`` (None: only counts)."""

    def __init__(self, root: Path, pid: int, kill_at: int | None = None) -> None:
        self.count = 0
        self.killed_at: int | None = None
        self._pid, self._kill_at = pid, kill_at
        self._fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        for folder in _folders(root):
            if _libc.inotify_add_watch(self._fd, os.fsencode(folder), CHANGES) < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._fd], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                continue
            offset = 0
            while offset < len(data):
                _, _, _, name_len = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + name_len
                self.count += 1
                if self._kill_at is not None and self.killed_at is None and self.count >= self._kill_at:
                    _kill(self._pid)
                    self.killed_at = self.count

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        os.close(self._fd)


def kill_after(pid: int, seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, _kill, (pid,))
    timer.start()
    return timer


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _folders(root: Path) -> list[Path]:
    found = [root]
    for dirpath, dirnames, _ in os.walk(root):
        here = Path(dirpath)
        if here.name == "objects" and here.parent.name == ".git":
            dirnames[:] = []  # git's object fan-out: its ref and index writes mark a commit's steps
        found += [here / d for d in dirnames]
    return found
