"""The searcher's map of observations to sessions says what SQLite says, as rows are added."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from ai_memory.retrieval.session_map import SessionMap
from ai_memory.retrieval.streams import _obs_sessions
from ai_memory.store.connection import open_read_connection, open_write_connection
from ai_memory.store.migrations import migrate

EVENTS = ("session-start", "user-prompt", "post-tool-use", "stop", "session-end")


def _add(writer: sqlite3.Connection, rng: random.Random, n: int, start: int) -> None:
    writer.execute("BEGIN")
    for rowid in range(start, start + n):
        session = f"s{rng.randrange(40)}"
        writer.execute("INSERT OR IGNORE INTO sessions(id, agent, project, started_at, last_event_at)"
                       " VALUES (?, 'claude', 'acme', '2026-01-01', '2026-01-01')", (session,))
        writer.execute(
            "INSERT INTO observations(rowid, id, session_id, agent, event, project, occurred_at, received_at,"
            " title, body, payload) VALUES (?, ?, ?, 'claude', ?, 'acme', '2026-01-01', '2026-01-01', 't', 'b', '{}')",
            (rowid, f"obs-{rowid}", session, rng.choice(EVENTS)))
    writer.execute("COMMIT")


def test_the_map_answers_as_the_database_does_while_observations_are_added(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    writer = open_write_connection(path)
    migrate(writer)
    reader = open_read_connection(path)
    rng, sessions = random.Random(5), SessionMap()
    start = 1
    for batch in (0, 3, 700, 1, 2500, 0, 40):  # past the first capacity, and again past its double
        _add(writer, rng, batch, start)
        start += batch + rng.randrange(3)  # rowids with gaps
        wanted = sorted({rng.randrange(0, start + 5) for _ in range(600)})
        for content_only in (False, True):
            assert sessions.sessions_of(reader, wanted, content_only) == _obs_sessions(reader, wanted, content_only)
    reader.close()
    writer.close()


def test_the_map_answers_for_a_new_database_file_with_nothing_reset(tmp_path: Path) -> None:
    """A reindex swaps in another file, whose rowids are other observations."""
    sessions, rng = SessionMap(), random.Random(9)
    for name in ("first.sqlite", "second.sqlite"):
        writer = open_write_connection(tmp_path / name)
        migrate(writer)
        _add(writer, rng, 200, 1)
        reader = open_read_connection(tmp_path / name)
        wanted = list(range(1, 201))
        assert sessions.sessions_of(reader, wanted) == _obs_sessions(reader, wanted)
        reader.close()
        writer.close()
