"""The raw journal: daily JSONL segments of every sanitized observation, fsynced before commit.

The database is derived; if it is lost or corrupted, ``reindex`` rebuilds sessions and
observations from these segments. A torn last line (a crash mid-append) is skipped on read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any


class RawJournal:
    """Appends records to ``raw/YYYY-MM-DD.jsonl``; used only by the writer thread."""

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._day: str | None = None
        self._fh: IO[bytes] | None = None

    def append(self, records: list[dict[str, Any] | bytes]) -> None:
        """Write the records (dicts, or lines already encoded) as one block and fsync once."""
        if not records:
            return
        fh = self._segment()
        fh.write(b"".join(r if isinstance(r, bytes) else _encode(r) for r in records))
        fh.flush()
        os.fsync(fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def _segment(self) -> IO[bytes]:
        day = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        if day != self._day or self._fh is None:
            self.close()
            self._dir.mkdir(parents=True, exist_ok=True)
            path = self._dir / f"{day}.jsonl"
            is_new = not path.exists()
            self._fh = open(path, "ab")
            os.chmod(path, 0o600)
            if is_new:
                fsync_dir(self._dir)
            self._day = day
        return self._fh


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
    for path in sorted(directory.glob("*.jsonl")):
        with path.open("rb") as fh:
            for line in fh:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    yield record
