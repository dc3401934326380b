"""Late interaction with the real model: word pieces, their stored sign bits, word counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ai_memory.embed.model import MiniLM
from conftest import MODEL_CACHE
from ai_memory.retrieval import late_interaction
from ai_memory.store.connection import open_write_connection
from ai_memory.store.migrations import migrate


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM(cache_dir=MODEL_CACHE)


def test_word_pieces_join_into_the_words_they_spell(model: MiniLM) -> None:
    (tokens,) = model.encode_tokens(['Nate: I play "Xeonoblade Chronicles" on the Switch!'])
    words, vectors = late_interaction.content_pieces(tokens)
    assert words == ["nate", "play"] + ["xeonoblade"] * 5 + ["chronicles", "switch"]  # no "I", "on", "the", '"'
    assert vectors.shape == (len(words), model.dim)


def test_the_turn_holding_the_query_words_scores_highest(model: MiniLM) -> None:
    question, same, other, empty = model.encode_tokens([
        "Why did the ledger export fail?", "Ana: The ledger export failed because the disk was full.",
        "Ana: We painted the harbour mural on Sunday.", "And so it was."])
    query = late_interaction.query_side(*late_interaction.content_pieces(question), lambda word: 1.0)
    assert query is not None
    turns = [late_interaction.packed(str(i), t) for i, t in enumerate((same, other, empty))]
    scores = late_interaction.best_scores(query, [(p.content_hash, p.count, p.bits) for p in turns], model.dim)
    assert scores["0"] > scores["1"] + 0.2
    assert "2" not in scores  # no content word: nothing to match
    nothing = late_interaction.content_pieces(model.encode_tokens(["what is it?"])[0])
    assert late_interaction.query_side(*nothing, lambda w: 1.0) is None


def test_each_text_counts_once_and_rare_words_weigh_more(tmp_path: Path, model: MiniLM) -> None:
    conn = open_write_connection(tmp_path / "memory.sqlite")
    migrate(conn)
    texts = ["Ana: the ledger export failed", "Ana: the ledger tables moved", "Ana: lunch was late"]
    for digest, tokens in zip(("a", "b", "c", "a"), model.encode_tokens([*texts, texts[0]])):
        late_interaction.store(conn, model.model_id, late_interaction.packed(digest, tokens))
    counts = dict(conn.execute("SELECT word, turns FROM piece_counts"))
    assert counts[""] == 3 and counts["ana"] == 3 and counts["ledger"] == 2 and counts["export"] == 1
    idf = late_interaction.rarity(conn, model.model_id, ["ana", "ledger", "export", "zeppelin"]).idf
    assert idf("ana") < idf("ledger") < idf("export") < idf("zeppelin")
    conn.close()


def test_counting_differing_bits_gives_the_sign_agreement() -> None:
    """The popcount kernel scores exactly what unpacking the signs and multiplying would: the
    weighted mean over query pieces of the best (agreeing - differing) / dim over a turn's pieces."""
    rng = np.random.default_rng(7)
    dim = 384
    q, a, b = rng.normal(size=(3, dim)), rng.normal(size=(5, dim)), rng.normal(size=(2, dim))
    query = late_interaction.query_side(["x", "x", "y"], q, lambda word: {"x": 1.0, "y": 3.0}[word])
    assert query is not None
    # a turn with no content piece between two others must not shift where the next one starts
    turns = [("a", 5, late_interaction.pack(a)), ("none", 0, b""), ("b", 2, late_interaction.pack(b))]
    scores = late_interaction.best_scores(query, turns, dim)
    assert "none" not in scores
    weights = np.array([0.5, 0.5, 3.0]) / 4.0  # "x" shares its weight between its two pieces
    for key, vectors in (("a", a), ("b", b)):
        agreement = np.sign(q) @ np.sign(vectors).T / dim
        assert scores[key] == pytest.approx(float(weights @ agreement.max(axis=1)), abs=1e-6)


def test_a_search_reads_pieces_most_wanted_first_within_its_budget(tmp_path: Path, model: MiniLM,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    conn = open_write_connection(tmp_path / "memory.sqlite")
    migrate(conn)
    conn.execute("INSERT INTO sessions(id, agent, started_at, last_event_at) VALUES ('s', 'claude-code', 'now', 'now')")
    texts = ["Ana: the ledger export failed twice", "Ana: the ledger tables moved", "Ana: lunch was late again"]
    rowids = []
    for i, tokens in enumerate(model.encode_tokens(texts)):
        pieces = late_interaction.packed(f"h{i}", tokens)
        late_interaction.store(conn, model.model_id, pieces)
        rowids.append(conn.execute(
            "INSERT INTO observations(id, session_id, agent, event, occurred_at, received_at, title, body, payload,"
            " embed_hash) VALUES (?, 's', 'claude-code', 'user-prompt', 'now', 'now', '', ?, '{}', ?)",
            (f"o{i}", texts[i], f"h{i}")).lastrowid)
    counts = [c for (c,) in conn.execute("SELECT count FROM token_vectors ORDER BY content_hash")]
    wanted = [rowids[2], rowids[0], rowids[1]]
    every = late_interaction.stored_pieces(conn, model.model_id, wanted, query_pieces=2)
    assert [r for r, _, _ in every] == wanted
    # A budget for the first two turns' pieces: the third is left unread, whatever its size.
    monkeypatch.setattr(late_interaction, "PAIR_BUDGET", 2 * (counts[2] + counts[0]))
    some = late_interaction.stored_pieces(conn, model.model_id, wanted, query_pieces=2)
    assert [r for r, _, _ in some] == wanted[:2]
    conn.close()


def test_pieces_read_again_from_the_cache_are_the_pieces_stored(tmp_path: Path) -> None:
    """A search's stored pieces are the same whether read from SQLite, from what earlier searches
    kept, or from a cache too small to keep them all; a turn not yet linked is read again later."""
    conn = open_write_connection(tmp_path / "memory.sqlite")
    migrate(conn)
    rng = np.random.default_rng(3)
    conn.execute("INSERT INTO sessions(id, agent, project, started_at, last_event_at)"
                 " VALUES ('s', 'claude', 'acme', '2026-01-01', '2026-01-01')")
    for rowid in range(1, 41):
        count = int(rng.integers(1, 30))
        late_interaction.store(conn, "m", late_interaction.Pieces(f"h{rowid}", count,
                                                                  late_interaction.pack(rng.normal(size=(count, 384))),
                                                                  frozenset({"w"})))
        conn.execute("INSERT INTO observations(rowid, id, session_id, agent, event, occurred_at, received_at, title,"
                     " body, payload, embed_hash) VALUES (?, ?, 's', 'claude', 'stop', '2026', '2026', 't', 'b', '{}',"
                     " ?)", (rowid, f"o{rowid}", f"h{rowid}" if rowid % 7 else None))
    wanted = [int(r) for r in rng.permutation(np.arange(1, 45))]
    uncached = late_interaction.stored_pieces(conn, "m", wanted, 20)
    for cache in (late_interaction.PieceCache(), late_interaction.PieceCache(max_bytes=3_000)):
        assert late_interaction.stored_pieces(conn, "m", wanted, 20, cache) == uncached
        assert late_interaction.stored_pieces(conn, "m", wanted, 20, cache) == uncached
        spent = late_interaction.stored_pieces(conn, "m", wanted, 1_500, cache)  # a budget of 266 pieces
        assert spent == late_interaction.stored_pieces(conn, "m", wanted, 1_500) and 0 < len(spent) < len(uncached)
    cache = late_interaction.PieceCache()
    late_interaction.stored_pieces(conn, "m", wanted, 20, cache)
    conn.execute("UPDATE observations SET embed_hash = 'h1' WHERE rowid = 7")  # linked by the embedding job
    assert late_interaction.stored_pieces(conn, "m", [7], 20, cache) == late_interaction.stored_pieces(conn, "m", [7], 20)
    assert late_interaction.stored_pieces(conn, "m", [7], 20, cache)[0][0] == 7
    conn.close()


def test_the_cache_answers_for_a_new_database_file_with_nothing_cleared(tmp_path: Path) -> None:
    """A reindex swaps in another file: the same rowid is another turn, with other pieces."""
    cache, rng, answers = late_interaction.PieceCache(), np.random.default_rng(4), []
    for name in ("first.sqlite", "second.sqlite"):
        conn = open_write_connection(tmp_path / name)
        migrate(conn)
        conn.execute("INSERT INTO sessions(id, agent, project, started_at, last_event_at)"
                     " VALUES ('s', 'claude', 'acme', '2026-01-01', '2026-01-01')")
        count = 3 if name == "first.sqlite" else 5
        late_interaction.store(conn, "m", late_interaction.Pieces(
            f"h-{name}", count, late_interaction.pack(rng.normal(size=(count, 384))), frozenset({"w"})))
        conn.execute("INSERT INTO observations(rowid, id, session_id, agent, event, occurred_at, received_at, title,"
                     " body, payload, embed_hash) VALUES (1, 'o1', 's', 'claude', 'stop', '2026', '2026', 't', 'b',"
                     " '{}', ?)", (f"h-{name}",))
        answers.append(late_interaction.stored_pieces(conn, "m", [1], 20, cache))
        assert answers[-1] == late_interaction.stored_pieces(conn, "m", [1], 20)
        conn.close()
    assert [count for _, count, _ in (a[0] for a in answers)] == [3, 5]
