"""Which session each observation was recorded in, held in memory for the turn streams.

A search asks for the sessions of hundreds of observations (each match and its neighbours), and
SQLite answers a rowid lookup on a table of wide rows in about 4 us: 5-10 ms a search. An
observation's session and event never change and observations are only ever added to a
database file (a rebuild makes a new file, which ``store.cache_stamp`` tells), so the map is read
once and then extended by the rows added since. ``PRAGMA data_version`` tells, at no cost, that nothing
was committed since the last look. 13 bytes an observation (13 MB at a million), in arrays that
grow by doubling: rows are appended past the end a reader sees, so a search holding the map as
it was is never disturbed.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ai_memory.core.events import SESSION_MARKERS
from ai_memory.store.cache_stamp import NO_STAMP, CacheStamp, stamp_and_version
from ai_memory.store.search_rows import observations_after


@dataclass(frozen=True)
class _Rows:
    """The first ``n`` entries of the arrays are the observations loaded, by ascending rowid."""

    rowids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    sessions: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    markers: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # session start or end
    n: int = 0
    names: list[str] = field(default_factory=list)  # session ids by their code (only ever appended)
    version: tuple[int, int] = (0, 0)  # (connection id, PRAGMA data_version) last checked
    stamp: CacheStamp = NO_STAMP  # of the database file the rows were read from

    @property
    def last(self) -> int:
        return int(self.rowids[self.n - 1]) if self.n else 0


_BATCH = 10_000  # rows read at a time


class SessionMap:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows = _Rows()
        self._codes: dict[str, int] = {}
        self._names: list[str] = []

    def sessions_of(self, conn: sqlite3.Connection, rowids: Iterable[int],
                    content_only: bool = False) -> list[tuple[int, str]]:
        """(rowid, session id) of those of ``rowids`` that are observations, in ascending rowid
        order; ``content_only`` leaves out session start and end markers."""
        rows = self._refreshed(conn)
        wanted = np.unique(np.fromiter(rowids, dtype=np.int64))
        at = np.searchsorted(rows.rowids[:rows.n], wanted)
        inside = at < rows.n
        found = np.zeros(len(wanted), dtype=bool)
        found[inside] = rows.rowids[at[inside]] == wanted[inside]
        at = at[found]
        if content_only:
            keep = ~rows.markers[at]
            at = at[keep]
        return [(rowid, rows.names[code]) for rowid, code in zip(rows.rowids[at].tolist(), rows.sessions[at].tolist())]

    def _refreshed(self, conn: sqlite3.Connection) -> _Rows:
        stamp, data_version = stamp_and_version(conn)
        version = (id(conn), data_version)
        with self._lock:
            if self._rows.stamp.file_id != stamp.file_id:  # another file: its rowids are other rows
                self._rows, self._codes, self._names = _Rows(), {}, []
            if self._rows.version != version or self._rows.stamp != stamp:
                self._rows = self._extended(conn, self._rows, version, stamp)
            return self._rows

    def _extended(self, conn: sqlite3.Connection, rows: _Rows, version: tuple[int, int],
                  stamp: CacheStamp) -> _Rows:
        """The rows added since, read a batch at a time: a first load of a million rows read
        whole held a few hundred MB of row tuples at once, which the heap then kept."""
        cursor = observations_after(conn, rows.last)
        rowids, sessions, markers, n = rows.rowids, rows.sessions, rows.markers, rows.n
        while added := cursor.fetchmany(_BATCH):
            need = n + len(added)
            if need > len(rowids):  # a larger home: the old arrays stay as they are for their readers
                size = max(need, 2 * len(rowids), 1024)
                rowids, sessions, markers = (_grown(a, size, n) for a in (rowids, sessions, markers))
            rowids[n:need] = [int(r[0]) for r in added]
            sessions[n:need] = [self._code(str(r[1])) for r in added]
            markers[n:need] = [r[2] in SESSION_MARKERS for r in added]
            n = need
        return _Rows(rowids, sessions, markers, n, self._names, version, stamp)

    def _code(self, session_id: str) -> int:
        code = self._codes.get(session_id)
        if code is None:  # appended: a reader only ever looks up the codes it was given
            code = self._codes[session_id] = len(self._names)
            self._names.append(session_id)
        return code


def _grown(a: np.ndarray, size: int, n: int) -> np.ndarray:
    out = np.empty(size, dtype=a.dtype)
    out[:n] = a[:n]
    return out
