"""What a search does differently on a large memory, checked on a small one with small windows:
the observations' common terms left out of the full-text query, and common terms' page counts
read from the newest pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_memory.core.page import parse_page
from ai_memory.retrieval.fts import common_turn_terms, page_count, page_term_stats, search_observations
from ai_memory.store.connection import open_write_connection
from ai_memory.store.migrations import migrate
from ai_memory.store.observations import store_record
from ai_memory.store.pages import index_page_rows


@pytest.fixture
def conn(tmp_path: Path):
    conn = open_write_connection(tmp_path / "memory.sqlite")
    migrate(conn)
    conn.execute("BEGIN")
    for i in range(400):
        rare = " It failed with ZirconTimeout." if i == 123 else ""
        store_record(conn, {"id": f"o{i}", "session_id": f"s{i // 20}", "agent": "claude", "event": "tool_result",
                            "project": "acme-api", "occurred_at": f"2026-01-01T00:00:{i % 60:02d}Z",
                            "received_at": "2026-01-01T00:00:00Z", "title": "Read",
                            "body": f"Read src/billing/handler_{i}.py in the billing service.{rare}", "payload": {}})
    for i in range(300):
        extra = "The ledger is sharded." if i % 2 else ""
        rare = "Zircon keys rotate weekly." if i in (5, 150, 180) else ""  # none among the newest 100
        page = parse_page(f"acme-api/notes/n{i}.md", f"---\ntitle: Note {i}\n---\nAbout invoices. {extra} {rare}\n".encode())
        index_page_rows(conn, page, 0, 1)
    conn.execute("COMMIT")
    yield conn
    conn.close()


def test_terms_most_observations_hold_are_left_out_of_the_turn_query(conn) -> None:
    common = common_turn_terms(conn, "billing handler ZirconTimeout in src", window=100)
    assert common == {"src", "bill", "handler"}  # stems, as the index holds them
    assert "zircontimeout" not in common and "zircon" not in common
    assert common_turn_terms(conn, "billing handler ZirconTimeout in src") == frozenset()  # a small memory: all kept
    assert common_turn_terms(conn, "billing service src", window=100) == frozenset()  # nothing rarer is left
    hits = search_observations(conn, "billing handler ZirconTimeout in src", limit=5, window=100)
    assert [_id(conn, h.rowid) for h in hits] == ["o123"]  # only the rare term was matched
    assert len(search_observations(conn, "billing handler ZirconTimeout in src", limit=5)) == 5


def test_common_terms_are_kept_when_no_other_term_occurs(conn) -> None:
    assert common_turn_terms(conn, "src qwertyzzz", window=100) == frozenset()
    hits = search_observations(conn, "src qwertyzzz", limit=5, window=100)
    assert len(hits) == 5 and all("src/billing" in _body(conn, h.rowid) for h in hits)


def test_only_the_first_24_terms_are_counted(conn) -> None:
    filler = " ".join(f"qwerty{chr(97 + i)}" for i in range(24))  # 24 terms found nowhere
    assert common_turn_terms(conn, f"{filler} ZirconTimeout src", window=100) == frozenset()
    assert common_turn_terms(conn, f"ZirconTimeout src {filler}", window=100) == {"src"}


def _id(conn, rowid: int) -> str:
    return conn.execute("SELECT id FROM observations WHERE rowid = ?", (rowid,)).fetchone()[0]


def _body(conn, rowid: int) -> str:
    return conn.execute("SELECT body FROM observations WHERE rowid = ?", (rowid,)).fetchone()[0]


def test_a_common_terms_page_count_is_read_from_the_newest_pages(conn) -> None:
    assert page_count(conn) == 300
    exact = page_term_stats(conn, "ledger invoices zircon")
    assert exact.df == {"ledger": 150, "invoic": 300, "zircon": 3}
    windowed = page_term_stats(conn, "ledger invoices zircon", window=100)
    assert windowed.pages == 300
    assert windowed.df["invoic"] == 300 and abs(windowed.df["ledger"] - 150) <= 3
    assert windowed.df["zircon"] == 3  # on no page of the window: counted over every page
