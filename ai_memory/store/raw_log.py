"""The raw journal: daily JSONL segments of every sanitized observation, fsynced before commit.

The database is derived; if it is lost or corrupted, ``reindex`` rebuilds sessions and
observations from these segments. A torn last line (a crash mid-append) is skipped on read.

The journal holds exactly the committed batches: an append that fails part-way (a full disk)
is cut back off, and so is the append of a batch whose COMMIT then failed (``undo``). A torn
tail left by a crash is fenced off with a newline before the next append, so it can never
swallow the first record written after it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

log = logging.getLogger(__name__)


class RawJournal:
    """Appends records to ``raw/YYYY-MM-DD.jsonl``; used only by the writer thread.

    Unbuffered (``os.write`` on an O_APPEND descriptor): a buffered file object would keep the
    bytes of a failed write and write them again, out of place, with the next batch.
    """

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._day: str | None = None
        self._fd: int | None = None
        self._undo_to: int | None = None  # size of the segment before the last append

    def append(self, records: list[dict[str, Any] | bytes]) -> None:
        """Write the records (dicts, or lines already encoded) as one block and fsync once.

        On failure the segment is cut back to its size before this call, and the OSError
        (ENOSPC, EIO, ...) goes to the writer, which fails the batch.
        """
        self._undo_to = None
        if not records:
            return
        data = b"".join(r if isinstance(r, bytes) else _encode(r) for r in records)
        fd = self._segment()
        start = os.fstat(fd).st_size
        if start and os.pread(fd, 1, start - 1) != b"\n":
            data = b"\n" + data  # a torn tail from a crash: keep it a line of its own
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError:
            self._cut(fd, start)
            raise
        self._undo_to = start

    def undo(self) -> None:
        """The COMMIT after the last append failed: remove that append (truncating needs no space)."""
        if self._undo_to is not None and self._fd is not None:
            self._cut(self._fd, self._undo_to)
        self._undo_to = None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._undo_to = None

    def _cut(self, fd: int, size: int) -> None:
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as exc:  # the next append fences the torn tail off with a newline
            log.error("raw journal: could not cut a failed append back off: %s", exc)

    def _segment(self) -> int:
        day = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        if day != self._day or self._fd is None:
            self.close()
            self._dir.mkdir(parents=True, exist_ok=True)
            path = self._dir / f"{day}.jsonl"
            is_new = not path.exists()
            # O_RDWR, not O_WRONLY: append reads the last byte to detect a torn tail.
            self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            os.chmod(path, 0o600)
            if is_new:
                fsync_dir(self._dir)
            self._day = day
        return self._fd


def _write_all(fd: int, data: bytes) -> None:
    """os.write may write less than asked (a nearly full disk): write the rest or raise."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _encode(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in ``path`` durable (the directory entry itself)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def iter_records(directory: Path) -> Iterator[dict[str, Any]]:
    """Every intact record of every segment, oldest segment first; torn lines are skipped."""
    for line in iter_lines(directory):
        record = decode_line(line)
        if record is not None:
            yield record


# Each segment's size at a moment: what a rebuild began reading, so that catching up reads on
# from there, not the whole journal again.
JournalPosition = dict[str, int]
_BACK = 1 << 16


def journal_position(directory: Path) -> JournalPosition:
    return {path.name: path.stat().st_size for path in sorted(directory.glob("*.jsonl"))}


def iter_lines(directory: Path, after: JournalPosition | None = None) -> Iterator[bytes]:
    """Every line of every segment as stored, oldest segment first (``decode_line`` reads one);
    with ``after``, only the lines that reach past each segment's size then (a line an append
    was writing at that moment is read whole)."""
    for path in sorted(directory.glob("*.jsonl")):
        with path.open("rb") as fh:
            if after is not None and path.name in after:
                fh.seek(_line_start(fh, after[path.name]))
            yield from fh


def _line_start(fh: BinaryIO, offset: int) -> int:
    """Where the line holding byte ``offset`` begins (``offset`` itself just after a newline)."""
    end = offset
    while end > 0:
        start = max(0, end - _BACK)
        fh.seek(start)
        found = fh.read(end - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0


def decode_line(line: bytes) -> dict[str, Any] | None:
    """The record a line holds; None for a torn or foreign line."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
