"""The in-memory vector cache against a real database: what a writer commits, a search sees.

The cache reads new rows incrementally. These tests write through one connection and search
through another, as the daemon's writer and readers do, and check the cases where a row joins
its vector late, or only its project says whether a search may see it.
"""

from __future__ import annotations

import gc
import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ai_memory.core.project_map import ProjectMap
from ai_memory.retrieval.vectors import VectorIndex
from ai_memory.store.fts_rows import index_text
from ai_memory.store.connection import open_read_connection, open_write_connection
from ai_memory.store.migrations import MIGRATIONS, migrate
from ai_memory.store.projects import apply_map

MODEL, DIM = "test-model", 4


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture()
def db(tmp_path: Path):
    path = tmp_path / "memory.sqlite"
    writer = open_write_connection(path)
    migrate(writer)
    reader = open_read_connection(path)
    yield writer, reader
    reader.close()
    writer.close()


def add_vector(writer: sqlite3.Connection, digest: str, vector: np.ndarray) -> None:
    writer.execute("INSERT INTO embeddings(content_hash, model, dim, vector) VALUES (?,?,?,?)",
                   (digest, MODEL, DIM, vector.tobytes()))


def add_observation(writer: sqlite3.Connection, rowid: int, session: str, project: str | None,
                    embed_hash: str | None) -> None:
    writer.execute("INSERT OR IGNORE INTO sessions(id, agent, project, started_at, last_event_at)"
                   " VALUES (?, 'claude', ?, '2026-01-01', '2026-01-01')", (session, project))
    writer.execute(
        "INSERT INTO observations(rowid, id, session_id, agent, event, project, occurred_at, received_at,"
        " title, body, payload, embed_hash) VALUES (?, ?, ?, 'claude', 'user-prompt', ?, '2026-01-01',"
        " '2026-01-01', 't', 'b', '{}', ?)", (rowid, f"obs-{rowid}", session, project, embed_hash))


def test_an_observation_linked_late_to_a_known_vector_is_found(db) -> None:
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    add_vector(writer, "h1", unit(1, 0, 0, 0))
    add_observation(writer, 1, "s1", "acme", "h1")
    add_observation(writer, 2, "s2", "acme", None)  # stored; the embedding job has not run yet
    query = unit(1, 0, 0, 0)
    assert [r for r, _, _ in index.search_observations(reader, query)] == [1]
    # Same text as observation 1: the job links it to the vector that already exists, so
    # neither its rowid nor the vector's is new to the cache.
    writer.execute("UPDATE observations SET embed_hash = 'h1' WHERE rowid = 2")
    assert sorted(r for r, _, _ in index.search_observations(reader, query)) == [1, 2]


def test_a_search_sees_only_its_projects_rows(db) -> None:
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    add_vector(writer, "loud", unit(1, 0, 0, 0))
    add_vector(writer, "quiet", unit(1, 0.3, 0, 0))
    for rowid in range(1, 6):
        add_observation(writer, rowid, "loud-session", "other-app", "loud")
    add_observation(writer, 6, "quiet-session", "Acme API", "quiet")  # as spelled by a client
    query = unit(1, 0, 0, 0)
    everywhere = index.search_observations(reader, query, limit=3)
    assert [sid for _, sid, _ in everywhere] == ["loud-session"] * 3  # the quiet turn is crowded out
    scoped = index.search_observations(reader, query, limit=3, projects={"acme-api", "_global"})
    assert [(r, sid) for r, sid, _ in scoped] == [(6, "quiet-session")]


def test_a_project_renamed_in_the_index_is_searched_under_its_new_name(db) -> None:
    """The rows' new project is read again because the rename counted a rewrite (in the
    database, in its own transaction), not because anyone told the cache."""
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    add_vector(writer, "a", unit(1, 0, 0, 0))
    add_observation(writer, 1, "s1", "old-name", "a")
    writer.execute("INSERT INTO observations_fts(rowid, title, body, project) VALUES (1, ?, ?, 'old-name')",
                   (index_text("t"), index_text("b")))  # as the store indexes a turn
    query = unit(1, 0, 0, 0)
    assert [r for r, _, _ in index.search_observations(reader, query, projects={"old-name"})] == [1]
    writer.execute("BEGIN")
    assert apply_map(writer, ProjectMap(aliases={"old-name": "new-name"})) > 0
    writer.execute("COMMIT")
    assert [r for r, _, _ in index.search_observations(reader, query, projects={"new-name"})] == [1]
    assert index.search_observations(reader, query, projects={"old-name"}) == []


def test_a_new_database_file_is_read_in_full_with_nothing_reset(tmp_path: Path) -> None:
    """A reindex swaps in a file whose rowids are other rows: the same cache, asked through a
    connection to the new file, answers from that file only."""
    index, query = VectorIndex(MODEL, DIM), unit(1, 0, 0, 0)
    answers = []
    for name, session in (("first.sqlite", "s-first"), ("second.sqlite", "s-second")):
        writer = open_write_connection(tmp_path / name)
        migrate(writer)
        add_vector(writer, f"v-{name}", unit(1, 0.1, 0, 0))
        add_observation(writer, 1, session, "acme", f"v-{name}")
        reader = open_read_connection(tmp_path / name)
        answers.append([(r, sid) for r, sid, _ in index.search_observations(reader, query)])
        reader.close()
        writer.close()
    assert answers == [[(1, "s-first")], [(1, "s-second")]]


def test_a_search_holding_the_old_matrix_is_not_disturbed_by_a_refresh(db) -> None:
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    add_vector(writer, "a", unit(1, 0, 0, 0))
    add_observation(writer, 1, "s1", "acme", "a")
    before = index.observation_matrix(reader)
    add_vector(writer, "b", unit(0, 1, 0, 0))
    add_observation(writer, 2, "s1", "acme", "b")
    after = index.observation_matrix(reader)
    assert len(after.keys) == 2 and after is not before
    assert len(before.keys) == len(before.matrix) == len(before.projects) == 1  # unchanged, consistent


def test_an_existing_database_upgrades_to_sentences_and_project_scopes(tmp_path: Path) -> None:
    """A v8 database (before sentence vectors and the project columns): its turns keep their
    vectors, get sentences queued newest first, and turns and pages are found within their
    project."""
    from ai_memory.retrieval.embedding_job import find_pending
    from ai_memory.retrieval.fts import search_observations, search_pages

    path = tmp_path / "memory.sqlite"
    writer = open_write_connection(path)
    assert migrate(writer, upto=8) == 8
    add_vector(writer, "whole", unit(1, 0, 0, 0))
    for rowid, event in ((1, "user-prompt"), (2, "post-tool-use"), (3, "user-prompt")):
        writer.execute("INSERT OR IGNORE INTO sessions(id, agent, project, started_at, last_event_at)"
                       " VALUES ('s1', 'claude', 'acme', '2026-01-01', '2026-01-01')")
        writer.execute(
            "INSERT INTO observations(rowid, id, session_id, agent, event, project, occurred_at, received_at,"
            " title, body, payload, embed_hash) VALUES (?, ?, 's1', 'claude', ?, 'acme', '2026-01-01',"
            " '2026-01-01', 'prompt', ?, '{}', ?)",
            (rowid, f"o{rowid}", event, f"Ana: The ledger moved to Postgres {rowid}. Billing exports run nightly.",
             "whole" if event == "user-prompt" else ""))
        writer.execute("INSERT INTO observations_fts(rowid, title, body) SELECT rowid, title, body"
                       " FROM observations WHERE rowid = ?", (rowid,))
    writer.execute("INSERT INTO pages(path, project, type, title, tier, body, frontmatter, content_hash, mtime_ns,"
                   " size, indexed_at) VALUES ('acme/a.md', 'acme', 'Note', 'Ledger notes', 'semantic', 'Postgres', '{}',"
                   " 'h', 0, 0, 'x')")
    writer.execute("INSERT INTO chunks(id, page_id, ord, text, content_hash) VALUES (7, 1, 0, 't', 'whole')")
    writer.execute("INSERT INTO pages_fts(rowid, title, summary, body) VALUES (1, 'Ledger notes', '', 'Postgres')")
    assert migrate(writer) == MIGRATIONS[-1][0]
    assert [tuple(r) for r in writer.execute("SELECT id, page_id FROM chunks")] == [(7, 1)]  # kept through the rebuild
    done = dict(writer.execute("SELECT rowid, sentences_done FROM observations").fetchall())
    assert done == {1: 0, 2: 1, 3: 0}  # only conversational turns wait for their sentences
    reader = open_read_connection(path)
    try:
        assert [h.rowid for h in search_observations(reader, "ledger", 10, projects={"acme"})] != []
        assert search_observations(reader, "ledger", 10, projects={"other"}) == []
        assert search_observations(reader, "acme", 10) == []  # the project column is not text
        assert [h.rowid for h in search_pages(reader, "ledger", 10, projects={"acme"})] == [1]
        assert search_pages(reader, "ledger", 10, projects={"other"}) == []
        assert search_pages(reader, "acme", 10) == []
        pending = find_pending(reader, MODEL)
        assert pending.split == [3, 1]  # newest first; their whole-text vectors stay linked
        assert len(pending.tokens) == 2  # and they get their piece vectors
        assert {rowid for rowid, _, _ in pending.sentences} == {1, 3}
        assert "Billing exports run nightly." in pending.texts
        hits = VectorIndex(MODEL, DIM).search_observations(reader, unit(1, 0, 0, 0))
        assert sorted(r for r, _, _ in hits) == [1, 3]
    finally:
        reader.close()
        writer.close()


def add_page(writer: sqlite3.Connection, path: str, project: str = "acme") -> int:
    cur = writer.execute(
        "INSERT INTO pages(path, project, type, title, tier, body, frontmatter, content_hash, mtime_ns, size,"
        " indexed_at) VALUES (?, ?, 'Note', 't', 'semantic', 'b', '{}', 'h', 0, 0, '2026-01-01')", (path, project))
    return int(cur.lastrowid)


def add_chunk(writer: sqlite3.Connection, page_id: int, digest: str) -> None:
    writer.execute("INSERT INTO chunks(page_id, ord, text, content_hash) VALUES (?, 0, 't', ?)", (page_id, digest))


def test_an_edited_page_matches_its_new_text_only(db) -> None:
    """Editing the newest page deletes its rows and inserts new ones, which SQLite gives the same
    page id (chunk ids are never reused): the cache must still swap the old vector for the new one."""
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    add_vector(writer, "old-text", unit(1, 0, 0, 0))
    add_vector(writer, "new-text", unit(0, 1, 0, 0))
    add_chunk(writer, add_page(writer, "acme/notes/a.md"), "old-text")
    first = index.search_pages(reader, unit(1, 0, 0, 0))
    writer.execute("DELETE FROM chunks")
    writer.execute("DELETE FROM pages")
    page_id = add_page(writer, "acme/notes/a.md")
    add_chunk(writer, page_id, "new-text")
    assert [p for p, _ in first] == [page_id]  # the same id, reused
    assert index.search_pages(reader, unit(1, 0, 0, 0)) == []  # the old text is gone
    assert [p for p, _ in index.search_pages(reader, unit(0, 1, 0, 0))] == [page_id]


def test_a_page_stops_matching_its_old_text_before_its_new_text_is_embedded(db) -> None:
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    add_vector(writer, "old-text", unit(1, 0, 0, 0))
    page_id = add_page(writer, "acme/notes/a.md")
    add_chunk(writer, page_id, "old-text")
    assert [p for p, _ in index.search_pages(reader, unit(1, 0, 0, 0))] == [page_id]
    writer.execute("DELETE FROM chunks WHERE page_id = ?", (page_id,))
    add_chunk(writer, page_id, "text-not-embedded-yet")  # same count of chunks as before
    assert index.search_pages(reader, unit(1, 0, 0, 0)) == []
    add_vector(writer, "text-not-embedded-yet", unit(0, 0, 1, 0))
    assert [p for p, _ in index.search_pages(reader, unit(0, 0, 1, 0))] == [page_id]


def test_a_page_saved_again_and_again_follows_its_latest_text(db) -> None:
    """Each save replaces the page's chunks; once the dead rows are a quarter of the matrix they
    are dropped, and a text the page held before comes back under its new chunk id."""
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    other = add_page(writer, "acme/notes/other.md")
    add_vector(writer, "other", unit(0, 0, 0, 1))
    add_chunk(writer, other, "other")
    page_id = add_page(writer, "acme/notes/a.md")
    texts = [("v1", unit(1, 0, 0, 0)), ("v2", unit(0, 1, 0, 0)), ("v3", unit(0, 0, 1, 0)), ("v1", unit(1, 0, 0, 0))]
    for n, (digest, vector) in enumerate(texts):
        writer.execute("DELETE FROM chunks WHERE page_id = ?", (page_id,))
        if n < 3:
            add_vector(writer, digest, vector)
        add_chunk(writer, page_id, digest)
        assert [p for p, _ in index.search_pages(reader, vector)] == [page_id], digest
        assert [p for p, _ in index.search_pages(reader, unit(0, 0, 0, 1))] == [other]
    assert index.search_pages(reader, unit(0, 1, 0, 0)) == []  # v2 and v3 are gone
    assert index.search_pages(reader, unit(0, 0, 1, 0)) == []
    assert len(index.chunk_matrix(reader).keys) < 5  # the dead rows were dropped, not only masked


def test_a_turn_close_to_every_other_turn_ranks_below_a_specific_one(db) -> None:
    """Hubness: forty small-talk turns sit together; the query is a little closer to them than
    to the one turn that answers it, which is close to nothing else."""
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    spread = np.random.default_rng(7).normal(0.0, 0.05, size=(40, 2))
    for rowid, (a, b) in enumerate(spread, start=1):
        add_vector(writer, f"chat{rowid}", unit(1, a, b, 0))
        add_observation(writer, rowid, f"chat-{rowid}", "acme", f"chat{rowid}")
    specific = unit(0.5, 0, 0, 0.866)
    add_vector(writer, "answer", specific)
    add_observation(writer, 41, "answer-session", "acme", "answer")
    query = unit(1, 0, 0, 0.5)
    assert float(query @ unit(1, 0, 0, 0)) > float(query @ specific) + 0.05  # by cosine alone, chat wins
    found = index.search_observations(reader, query, limit=41)
    assert found[0][:2] == (41, "answer-session")
    assert len(found) == 41  # the small talk still matches, below it


def test_too_few_turns_are_ranked_by_cosine_alone(db) -> None:
    writer, reader = db
    index = VectorIndex(MODEL, DIM)
    for rowid in range(1, 11):
        add_vector(writer, f"chat{rowid}", unit(1, rowid / 100, 0, 0))
        add_observation(writer, rowid, f"chat-{rowid}", "acme", f"chat{rowid}")
    add_vector(writer, "answer", unit(0.5, 0, 0, 0.866))
    add_observation(writer, 11, "answer-session", "acme", "answer")
    query = unit(1, 0, 0, 0.5)
    found = index.search_observations(reader, query, limit=11)
    assert found[-1][0] == 11
    cosines = {rowid: float(query @ unit(1, rowid / 100, 0, 0)) for rowid in range(1, 11)}
    cosines[11] = float(query @ unit(0.5, 0, 0, 0.866))
    assert {rowid: round(s, 4) for rowid, _, s in found} == {r: round(c, 4) for r, c in cosines.items()}


def followed_and_at_once(writer: sqlite3.Connection, reader: sqlite3.Connection, seed: int, query: np.ndarray,
                         exact_rows: int | None = None) -> tuple[list, list]:
    """80 turns written one by one: the turns found by an index that searched every ninth write
    (loading what was there so far), and by one that loaded them all at once."""
    sized = {} if exact_rows is None else {"exact_rows": exact_rows}
    following = VectorIndex(MODEL, DIM, **sized)
    rng = np.random.default_rng(seed)
    for rowid in range(1, 81):
        add_vector(writer, f"v{rowid}", unit(*rng.normal(0.0, 1.0, size=4)))
        add_observation(writer, rowid, f"s-{rowid}", "acme", f"v{rowid}")
        if rowid % 9 == 0:
            following.search_observations(reader, query, limit=80)
    at_once = VectorIndex(MODEL, DIM, **sized).search_observations(reader, query, limit=80)
    return following.search_observations(reader, query, limit=80), at_once


def test_the_hubness_correction_is_the_same_however_the_rows_were_loaded(db) -> None:
    """A query worker that loaded everything at once and the daemon that followed the writes
    one by one draw the same reference rows, so a query scores alike in both."""
    followed, at_once = followed_and_at_once(*db, 3, unit(1, 0, 0, 0.5))
    assert len(at_once) > 10
    assert [(r, round(s, 5)) for r, _, s in followed] == [(r, round(s, 5)) for r, _, s in at_once]


def clustered(rng: np.random.Generator, rows: int, dim: int = 384) -> np.ndarray:
    """Unit vectors around the same 200 centres, as embeddings of related texts lie."""
    centres = np.random.default_rng(1).standard_normal((200, dim)).astype(np.float32)
    m = centres[rng.integers(0, 200, rows)] + 0.8 * rng.standard_normal((rows, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_the_quantized_rows_find_the_exact_nearest_rows_with_their_cosines() -> None:
    from ai_memory.retrieval.quantized import QuantizedRows

    rng = np.random.default_rng(5)
    m = clustered(rng, 20_000)
    rows = QuantizedRows.of(m)
    assert rows.nbytes * 3 < m.nbytes
    allowed = rng.random(len(m)) < 0.5
    recalls, masked_recalls = [], []
    for q in clustered(rng, 40):
        exact = np.argsort(-(m @ q))[:100]
        found, sims = rows.nearest(q, 100)
        recalls.append(len(set(found.tolist()) & set(exact.tolist())) / 100)
        assert np.abs(sims - m[found] @ q).max() < 3e-3  # int8 cosines, within their error
        assert (np.diff(sims) <= 0).all()
        inside, _ = rows.nearest(q, 40, allowed)  # about the allowed half of the query's cluster
        assert allowed[inside].all()  # other projects' rows never take a place
        exact_inside = np.argsort(-np.where(allowed, m @ q, -1))[:40]
        masked_recalls.append(len(set(inside.tolist()) & set(exact_inside.tolist())) / 40)
    assert np.mean(recalls) >= 0.97 and np.mean(masked_recalls) >= 0.97


def resident_kb(array: np.ndarray) -> int:
    """How much of the map holding ``array`` this process has resident (/proc/self/smaps)."""
    address, entry = array.__array_interface__["data"][0], None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            low, high = (int(x, 16) for x in head.split("-"))
            entry = low <= address < high
        elif entry and line.startswith("Rss:"):
            return int(line.split()[1])
    raise AssertionError("no map holds the array")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/self/smaps")
def test_codes_kept_in_a_file_answer_as_codes_in_memory_and_stay_out_of_the_process(tmp_path: Path) -> None:
    """The daemon's quantized matrices keep their int8 codes in a file in the data dir: the
    same answers as codes in memory, whether made at once, appended to or cut down, and after
    a search none of those codes is resident in the process; the file has no name, so nothing
    is left in the directory when it is let go, or when the process dies."""
    from ai_memory.retrieval.quantized import QuantizedRows

    rng = np.random.default_rng(8)
    m = clustered(rng, 30_000)
    in_memory = QuantizedRows.of(m)
    in_file = QuantizedRows.of(m[:9_000], tmp_path).appended(m[9_000:20_000]).appended(m[20_000:])
    assert in_file.nbytes * 8 < in_memory.nbytes  # sign bits and scales only
    keep = rng.random(len(m)) < 0.7
    kept_in_memory, kept_in_file = in_memory.subset(keep), in_file.subset(keep)
    for q in clustered(rng, 10):
        for a, b in ((in_memory, in_file), (kept_in_memory, kept_in_file)):
            rows_a, sims_a = a.nearest(q, 50)
            rows_b, sims_b = b.nearest(q, 50)
            assert rows_a.tolist() == rows_b.tolist() and np.array_equal(sims_a, sims_b)
            assert resident_kb(b.codes) == 0
    assert np.array_equal(in_memory[np.arange(0, 30_000, 7)], in_file[np.arange(0, 30_000, 7)])
    assert resident_kb(in_file.codes) == 0 and os.listdir(tmp_path) == []
    # An instance appended to twice (a load that failed half way and was read again): rows
    # another instance maps are never written over.
    base = QuantizedRows.of(m[:9_000], tmp_path)
    first, second = base.appended(m[9_000:20_000]), base.appended(m[20_000:])
    assert np.array_equal(first[np.arange(9_000, 20_000, 11)], in_memory[np.arange(9_000, 20_000, 11)])
    assert np.array_equal(second[np.arange(9_000, 19_000, 13)], in_memory[np.arange(20_000, 30_000, 13)])
    assert second.file is not first.file
    del in_file, kept_in_file, base, first, second, b
    gc.collect()
    assert not [fd for fd in os.listdir("/proc/self/fd") if str(tmp_path) in os.path.realpath(f"/proc/self/fd/{fd}")]


def test_codes_stay_in_memory_where_no_file_can_be_written(tmp_path: Path, monkeypatch) -> None:
    """An unwritable directory, or a disk that would be left with too little space for the
    database: the same answers, from codes in memory."""
    from ai_memory.retrieval import quantized
    from ai_memory.retrieval.quantized import QuantizedRows

    rng = np.random.default_rng(9)
    m, q = clustered(rng, 12_000), clustered(rng, 1)[0]
    expected = QuantizedRows.of(m).nearest(q, 30)[0].tolist()
    nowhere = QuantizedRows.of(m, tmp_path / "missing")
    assert nowhere.file is None and nowhere.nearest(q, 30)[0].tolist() == expected
    in_file = QuantizedRows.of(m[:6_000], tmp_path)
    assert in_file.file is not None
    monkeypatch.setattr(quantized, "DISK_FREE_MIN_BYTES", 2**62)  # as good as a full disk
    grown = in_file.appended(m[6_000:])
    assert grown.file is None and grown.nearest(q, 30)[0].tolist() == expected
    assert QuantizedRows.of(m, tmp_path).file is None


@pytest.mark.parametrize("codes", ["in memory", "in a file"])
def test_a_matrix_past_its_exact_size_is_quantized_and_still_follows_the_database(db, codes, tmp_path) -> None:
    from ai_memory.retrieval.quantized import FILES_FREE_MEMORY, QuantizedRows

    writer, reader = db
    index = VectorIndex(MODEL, DIM, exact_rows=4, codes_dir=tmp_path if codes == "in a file" else None)
    directions = [unit(1, 0, 0, 0), unit(0, 1, 0, 0), unit(0, 0, 1, 0), unit(0, 0, 0, 1),
                  unit(1, 1, 0, 0), unit(0, 1, 1, 0), unit(1, 0, 0, 1)]
    pages = []
    for i, v in enumerate(directions[:3]):
        add_vector(writer, f"t{i}", v)
        pages.append(add_page(writer, f"acme/p{i}.md"))
        add_chunk(writer, pages[-1], f"t{i}")
    assert [p for p, _ in index.search_pages(reader, directions[1])][:1] == [pages[1]]
    assert isinstance(index.chunk_matrix(reader).matrix, np.ndarray)
    for i, v in enumerate(directions[3:], start=3):  # appended past the exact size
        add_vector(writer, f"t{i}", v)
        pages.append(add_page(writer, f"acme/p{i}.md", project="other" if i == 6 else "acme"))
        add_chunk(writer, pages[-1], f"t{i}")
    assert isinstance(index.chunk_matrix(reader).matrix, QuantizedRows)
    assert (index.chunk_matrix(reader).matrix.file is not None) == (codes == "in a file" and FILES_FREE_MEMORY)
    found = dict(index.search_pages(reader, directions[5]))
    assert max(found, key=found.get) == pages[5]
    assert abs(found[pages[5]] - 1.0) < 0.02 and abs(found[pages[1]] - float(directions[5] @ directions[1])) < 0.02
    assert pages[6] not in dict(index.search_pages(reader, directions[6], projects={"acme"}))
    writer.execute("DELETE FROM chunks WHERE page_id = ?", (pages[5],))  # masked
    assert pages[5] not in dict(index.search_pages(reader, directions[5]))
    writer.execute("DELETE FROM chunks WHERE page_id IN (?, ?)", (pages[4], pages[1]))  # dropped
    found = dict(index.search_pages(reader, directions[5]))
    assert not {pages[1], pages[4], pages[5]} & set(found) and pages[2] in found
    assert len(index.chunk_matrix(reader).matrix) == 4


def test_quantized_turns_rank_as_the_exact_ones_do(db) -> None:
    """Past the exact size, turns keep their order and, within the int8 error, their scores
    (hubness corrected) whether loaded at once or followed write by write."""
    writer, reader = db
    query = unit(1, 0.2, 0, 0.5)
    followed, at_once = followed_and_at_once(writer, reader, 11, query, exact_rows=16)
    truth = VectorIndex(MODEL, DIM, exact_rows=10_000).search_observations(reader, query, limit=80)
    assert [r for r, _, _ in followed] == [r for r, _, _ in at_once]
    assert len(truth) > 10 and {r for r, _, _ in at_once} == {r for r, _, _ in truth}
    scores = {r: s for r, _, s in truth}
    assert max(abs(s - scores[r]) for r, _, s in at_once) < 0.03


def test_a_narrow_scope_finds_what_masking_the_whole_matrix_finds() -> None:
    """A project holding few of the rows is searched over its rows only: the same rows and
    cosines as the product over every row with the others masked."""
    from ai_memory.retrieval.vectors import _Matrix, nearest

    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(3000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    codes = rng.integers(0, 6, size=3000).astype(np.int32)
    m = _Matrix(np.arange(3000), np.arange(3000), vectors, projects=codes,
                project_index={f"p{i}": i for i in range(6)})
    query = vectors[5] + 0.1
    for scope in ({"p1"}, {"p0", "p3"}, {"p0", "p1", "p2", "p3"}, None):
        rows, sims = nearest(m, query, 50, scope)
        every = vectors @ query
        if scope is not None:
            every = np.where(np.isin(codes, [int(s[1]) for s in scope]), every, -1.0)
        order = np.argsort(-every, kind="stable")[:50]
        kept = every[order] > -1.0
        assert list(rows[:int(kept.sum())]) == list(order[kept]) and np.allclose(sims[:int(kept.sum())], every[order][kept])


def test_the_embedding_job_looks_for_chunks_only_above_those_it_found_embedded(db) -> None:
    """A batch takes the first chunks without a vector; once they are stored, the next batch
    looks only above the last one read, and a batch that finds every chunk embedded moves the
    mark to the newest chunk. Chunks with the same text are one text to embed."""
    from ai_memory.retrieval.embedding_job import find_pending

    writer, reader = db
    page = add_page(writer, "acme/a.md")
    for i in range(40):
        add_chunk(writer, page, f"h{i % 38}")  # the last two repeat the first two texts
    add_vector(writer, "h5", unit(1, 0, 0, 0))
    ids = [r[0] for r in writer.execute("SELECT id FROM chunks ORDER BY id")]
    first = find_pending(reader, MODEL, limit=32)
    assert first.hashes == [f"h{i}" for i in range(33) if i != 5] and first.chunks_checked == ids[32]
    for digest in first.hashes:  # what the writer stores for the batch
        add_vector(writer, digest, unit(0, 1, 0, 0))
    second = find_pending(reader, MODEL, limit=32, chunks_after=first.chunks_checked)
    assert second.hashes == [f"h{i}" for i in range(33, 38)] and second.chunks_checked == ids[-1]
    for digest in second.hashes:
        add_vector(writer, digest, unit(0, 0, 1, 0))
    assert find_pending(reader, MODEL, limit=32, chunks_after=second.chunks_checked).hashes == []
    add_chunk(writer, page, "later")
    assert find_pending(reader, MODEL, limit=32, chunks_after=second.chunks_checked).hashes == ["later"]
    assert find_pending(reader, MODEL, limit=32).hashes == ["later"]  # from the start (after a reindex): the same
