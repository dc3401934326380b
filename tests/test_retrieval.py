"""Retrieval over a small real wiki: each stream, explain, as_of, supersession, raw hits, the model."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ai_memory.core.chunks import text_hash
from ai_memory.core.timeexpr import asks_when, parse_ranges, without_dates
from ai_memory.core.utterance import sentences
from ai_memory.retrieval.fts import query_terms, query_words
from ai_memory.retrieval.features import combine
from ai_memory.retrieval.rerank import answer_type, as_its_own_turn
from ai_memory.retrieval.turns import best_turns_of, most_wanted_first
from ai_memory.retrieval.streams import CONTEXT_WEIGHT, Stream, in_context
from conftest import Daemon
from wiki_helpers import page_text, wait_until

PAGES = {
    "acme-api/notes/limits.md": page_text("Rate limiter settings", "The gateway reads `RATE_LIMIT_BURST` at start."),
    "acme-api/gotchas/deploy.md": page_text(
        "Deployment pipeline failure", "The container image grew past the registry quota, so the release job "
        "was rejected.", type_="Gotcha"),
    "acme-api/notes/hub.md": page_text("Onboarding hub", "Start with the zebrafinch checklist. See [[acme-api/notes/spoke]]."),
    "acme-api/notes/spoke.md": page_text("Laptop setup", "Install the toolchain and clone the repositories."),
    "acme-api/notes/cluster.md": "---\ntype: Note\ntitle: Cluster notes\nproject: acme-api\ntags: [kubernetes]\n---\n"
                                 "Node pools are resized on Mondays.\n",
    "acme-api/decisions/old-db.md": "---\ntype: Decision\ntitle: Use MySQL\nproject: acme-api\n"
                                    "superseded_by: acme-api/decisions/new-db.md\n---\nWe chose MySQL for the ledger.\n",
    "acme-api/decisions/new-db.md": "---\ntype: Decision\ntitle: Use Postgres\nproject: acme-api\n"
                                    "supersedes: acme-api/decisions/old-db.md\n---\nWe chose Postgres for the ledger.\n",
}


@pytest.fixture(scope="module")
def wiki(tmp_path_factory) -> Daemon:
    data = tmp_path_factory.mktemp("retrieval") / "data"
    for rel, text in PAGES.items():
        path = data / "wiki" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    daemon = Daemon(data, env={"AI_MEMORY_EMBED_ENABLED": "1"}).start(timeout=60)

    def embedded() -> bool:
        status = daemon.request("GET", "/status")[1]
        emb = status["embeddings"]
        return emb["ready"] and emb["backlog"] == {"chunks": 0, "observations": 0}

    wait_until(embedded, timeout=120, step=0.2)
    yield daemon
    daemon.stop()


def query(d: Daemon, q: str, **extra) -> dict:
    status, body, _ = d.request("POST", "/v1/query", {"q": q, "project": "acme-api", "explain": True, **extra})
    assert status == 200, body
    return body


def settled(d: Daemon) -> bool:
    """Every observation has its vectors."""
    return d.request("GET", "/status")[1]["embeddings"]["backlog"]["observations"] == 0


def hit_for(body: dict, path: str) -> dict | None:
    return next((h for h in body["hits"] if h["path"] == path), None)


def test_identifier_is_found_by_full_text(wiki: Daemon) -> None:
    body = query(wiki, "RATE_LIMIT_BURST")
    top = body["hits"][0]
    assert top["path"] == "acme-api/notes/limits.md"
    assert top["explain"]["streams"]["fts"]["rank"] == 1


def test_paraphrase_is_found_by_vectors(wiki: Daemon) -> None:
    body = query(wiki, "why did shipping the build break")
    hit = hit_for(body, "acme-api/gotchas/deploy.md")
    assert hit is not None and "vectors" in hit["explain"]["streams"]
    assert "fts" not in hit["explain"]["streams"]  # no shared word: only meaning found it


def test_linked_page_is_found_by_the_graph(wiki: Daemon) -> None:
    body = query(wiki, "zebrafinch")
    hit = hit_for(body, "acme-api/notes/spoke.md")
    assert hit is not None and "graph" in hit["explain"]["streams"]
    assert hit["explain"]["edges"] == ["link->"]  # the hub links to it


def test_tagged_entity_is_found_by_the_entity_stream(wiki: Daemon) -> None:
    body = query(wiki, "kubernetes")
    hit = hit_for(body, "acme-api/notes/cluster.md")
    assert hit is not None and "entities" in hit["explain"]["streams"]
    assert "kubernetes" in hit["explain"]["matched_entities"]


def test_explain_accounts_for_every_score(wiki: Daemon) -> None:
    body = query(wiki, "ledger database decision")
    assert body["hits"]
    for hit in body["hits"]:
        ex = hit["explain"]
        assert abs(combine(ex["features"], ex["authority"]) - hit["score"]) < 1e-3
        assert abs(sum(s["rrf"] for s in ex["streams"].values()) - ex["rrf"]) < 1e-5


def test_superseded_pages_stay_out_unless_asked(wiki: Daemon) -> None:
    default = [h["path"] for h in query(wiki, "ledger")["hits"]]
    assert "acme-api/decisions/new-db.md" in default and "acme-api/decisions/old-db.md" not in default
    everything = [h["path"] for h in query(wiki, "ledger", include_superseded=True)["hits"]]
    assert "acme-api/decisions/old-db.md" in everything


def test_kind_and_min_score_filters(wiki: Daemon) -> None:
    body = query(wiki, "ledger", kind=["decision"])
    assert body["hits"] and all(h["type"] == "Decision" for h in body["hits"])
    assert query(wiki, "ledger", min_score=99.0)["hits"] == []
    status, reply, _ = wiki.request("POST", "/v1/query", {"q": "x", "kind": ["nonsense"]})
    assert status == 400 and "unknown kind" in reply["error"]


def test_as_of_returns_the_version_valid_then(wiki: Daemon) -> None:
    path = wiki.data_dir / "wiki" / "acme-api" / "notes" / "runbook.md"
    path.write_text(page_text("Runbook", "Restart the worker with lilacpebble."))
    wait_until(lambda: hit_for(query(wiki, "lilacpebble"), "acme-api/notes/runbook.md"), timeout=5)
    # the history is git's: a version is one once it is committed
    wait_until(lambda: "lilacpebble" in _committed(wiki, "acme-api/notes/runbook.md"))
    time.sleep(0.05)
    between = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    time.sleep(0.05)
    path.write_text(page_text("Runbook", "Restart the worker with tangerinekite."))
    wait_until(lambda: hit_for(query(wiki, "tangerinekite"), "acme-api/notes/runbook.md"), timeout=5)
    then = query(wiki, "restart worker", as_of=between)
    hit = hit_for(then, "acme-api/notes/runbook.md")
    assert hit is not None and "lilacpebble" in hit["snippet"]
    assert hit_for(query(wiki, "tangerinekite", as_of=between), "acme-api/notes/runbook.md") is None


def _committed(daemon: Daemon, rel: str) -> str:
    done = subprocess.run(["git", "-C", str(daemon.data_dir / "wiki"), "show", f"HEAD:{rel}"],
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def test_raw_hits_only_when_pages_miss(wiki: Daemon) -> None:
    wiki.post_hook({"session_id": "raw-1", "hook_event_name": "UserPromptSubmit", "cwd": "/home/dev/acme-api",
                    "prompt": "why is the quasarwidget flaky"})
    body = query(wiki, "quasarwidget")
    assert body["hits"] == [] and body["raw_hits"] and body["raw_hits"][0]["session_id"] == "raw-1"
    assert query(wiki, "RATE_LIMIT_BURST")["raw_hits"] == []


def test_raw_hits_stay_in_the_querys_project(wiki: Daemon) -> None:
    for project, sid in (("acme-api", "raw-mine"), ("acme-apis", "raw-theirs"), ("billing", "raw-other")):
        wiki.post_hook({"session_id": sid, "hook_event_name": "UserPromptSubmit", "cwd": f"/home/dev/{project}",
                        "prompt": "why is the nebulathorn cache cold"})
    wait_until(lambda: len(query(wiki, "nebulathorn", all=True)["raw_hits"]) == 3, timeout=10)
    mine = query(wiki, "nebulathorn")["raw_hits"]  # project acme-api; "acme-apis" stems alike in FTS
    assert [h["session_id"] for h in mine] == ["raw-mine"]


def test_evidence_points_at_the_turn(wiki: Daemon) -> None:
    sid = "ev-1"
    base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
    wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "How do we rotate the signing keys?"})
    wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Rotate them with the vaultwarden cron."})
    wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    db_page = lambda: query(wiki, "vaultwarden cron")["hits"]  # noqa: E731
    # once the turns have their vectors: the best turn is chosen by their votes too
    wait_until(lambda: db_page() and settled(wiki), timeout=30, step=0.2)
    hit = db_page()[0]
    assert hit["session_id"] == sid and "vaultwarden" in hit["evidence"][0]["snippet"]


def test_sentences_get_vectors_of_their_own_and_find_the_turn(wiki: Daemon) -> None:
    sid = "sent-1"
    base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
    long_turn = ("Priya: The sprint went fine and the demo was well received. Our cat Biscuit knocked a mug off "
                 "my desk during standup. We still owe the release notes for the billing export.")
    wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": long_turn})
    wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Omar: Thanks, talk tomorrow."})
    wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})

    wait_until(lambda: settled(wiki) and query(wiki, "release notes billing export")["hits"], timeout=30, step=0.2)
    with contextlib.closing(sqlite3.connect(wiki.data_dir / "db" / "memory.sqlite")) as conn:
        pieces = [r[0] for r in conn.execute(
            "SELECT s.content_hash FROM observation_sentences s JOIN observations o ON o.rowid = s.obs_rowid"
            " WHERE o.session_id = ? ORDER BY s.obs_rowid, s.ord", (sid,))]
    # three sentences of the long turn; the short reply is its own single vector
    assert pieces == [text_hash("Priya: The sprint went fine and the demo was well received."),
                      text_hash("Our cat Biscuit knocked a mug off my desk during standup."),
                      text_hash("We still owe the release notes for the billing export.")]
    # A question about one sentence of the turn, in other words: the sentence's vector finds it.
    body = query(wiki, "Which pet broke a cup in the office?")
    hit = next(h for h in body["hits"] if h["session_id"] == sid)
    assert "turns_vectors" in hit["explain"]["streams"]
    assert "Biscuit" in hit["evidence"][0]["snippet"] or "cat" in hit["evidence"][0]["snippet"]


def test_the_named_team_users_turn_is_the_evidence(wiki: Daemon) -> None:
    """A question naming a team user reads the turns that user recorded first."""
    tokens = {name: wiki.request("POST", "/v1/users", {"name": name})[1]["token"] for name in ("lena", "marco")}
    sid = "author-1"
    base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
    for name, prompt in (("lena", "Lena to Marco: I painted the harbour mural with the gloss enamel."),
                         ("marco", "Marco to Lena: I painted the harbour fence with the gloss enamel.")):
        status, _ = wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt},
                                   Authorization=f"Bearer {tokens[name]}")
        assert status == 202
    wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    wait_until(lambda: query(wiki, "harbour gloss enamel")["hits"] and settled(wiki), timeout=30, step=0.2)
    # Both turns name both people and share the same words: only who recorded it tells them apart.
    for name, painted in (("Lena", "mural"), ("Marco", "fence")):
        hit = next(h for h in query(wiki, f"What did {name} paint at the harbour?")["hits"] if h["session_id"] == sid)
        assert painted in hit["evidence"][0]["snippet"], hit["evidence"]


def test_a_turn_is_matched_word_by_word(wiki: Daemon) -> None:
    """The embedding job stores each turn's piece vectors and counts its words; a search
    scores the candidate sessions' turns by late interaction, shown in explain."""
    for sid, prompt in (("li-1", "Rosa: Honestly, tough opponents are what drive our squad to improve."),
                        ("li-2", "Rosa: The squad bus broke down again on the motorway.")):
        base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
        wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
        wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})

    def both() -> dict | None:
        body = query(wiki, "What motivates Rosa's squad to get better?")
        found = {h["session_id"]: h for h in body["hits"]}
        return found if settled(wiki) and {"li-1", "li-2"} <= found.keys() else None

    wait_until(both, timeout=30, step=0.2)
    found = both()
    assert found is not None
    for feature in ("token_match", "session_tokens"):  # the best turns, and every turn of the session
        assert found["li-1"]["explain"]["features"][feature] > found["li-2"]["explain"]["features"][feature]
    with contextlib.closing(sqlite3.connect(wiki.data_dir / "db" / "memory.sqlite")) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM token_vectors t JOIN observations o ON o.embed_hash ="
                              " t.content_hash WHERE o.session_id IN ('li-1', 'li-2')").fetchone()[0]
        opponents = conn.execute("SELECT turns FROM piece_counts WHERE word = 'opponents'").fetchone()
    assert stored == 2 and opponents == (1,)


def test_a_turn_outside_the_best_three_is_matched_word_by_word(wiki: Daemon) -> None:
    """Late interaction reads every turn of a session the turn streams reached, not only the
    best three by text and vector: a reply that says it in other words still counts."""
    decoys = ["Rosa: The squad bus got better seats.", "Rosa: Our squad got better kit this year.",
              "Rosa: The squad coach got a better car.", "Rosa: We get better pizza after squad practice."]
    answer = "Rosa: Honestly, tough opponents are what drive us to improve."
    for sid, prompts in (("far-1", [*decoys, answer]), ("far-2", [*decoys, "Rosa: The weather was grey all week."])):
        base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
        for prompt in prompts:
            wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
        wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})

    def both() -> dict | None:
        body = query(wiki, "What motivates Rosa's squad to get better?", k=50)
        found = {h["session_id"]: h["explain"]["features"] for h in body["hits"]}
        return found if settled(wiki) and {"far-1", "far-2"} <= found.keys() else None

    wait_until(both, timeout=30, step=0.2)
    found = both()
    assert found is not None
    assert found["far-1"]["session_tokens"] > found["far-2"]["session_tokens"]


def test_the_turn_that_answers_in_other_words_is_a_best_turn() -> None:
    """The best turns are chosen by rank votes of the text stream, the vector stream and late
    interaction: BM25's wide spread within a session does not let the text stream choose alone
    (scores scaled by each stream's best and added would pick 1, 2, 3 here; the vector stream and
    late interaction both put 4 first)."""
    text = Stream("turns_fts", [7], {7: 10.0}, {7: [(1, 10.0), (2, 9.0), (3, 8.5), (4, 0.5)]})
    meaning = Stream("turns_vectors", [7], {7: 0.6}, {7: [(4, 0.6), (1, 0.58), (2, 0.57), (3, 0.56)]})
    late = {1: 0.66, 2: 0.65, 3: 0.64, 4: 0.7}
    assert best_turns_of({"turns_fts": text}, 7) == [1, 2, 3]
    assert best_turns_of({"turns_fts": text, "turns_vectors": meaning}, 7, late=late) == [1, 4, 2]


def test_a_session_page_without_recorded_events_is_scored_as_written(wiki: Daemon) -> None:
    """A session page whose events are not here (imported, written by hand, or forgotten) has
    no turns to match: like a decision, it is its own turn, not a session that matched nothing."""
    path = wiki.data_dir / "wiki" / "acme-api" / "sessions" / "imported-cutover.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\ntype: Session Summary\ntitle: Gateway cutover\nproject: acme-api\n"
                    "session_id: imported-1\n---\nWe did the blue-green cutover of the billing gateway.\n")
    base = {"session_id": "cutover-1", "cwd": "/home/dev/acme-api"}
    wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Start the billing gateway cutover."})
    wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})

    def both() -> dict | None:
        hits = query(wiki, "billing gateway cutover")["hits"]
        found = {h["session_id"]: h["explain"] for h in hits}
        return found if settled(wiki) and {"imported-1", "cutover-1"} <= found.keys() else None

    wait_until(both, timeout=30, step=0.2)
    found = both()
    assert found is not None
    assert found["cutover-1"]["imputed"] == []
    assert {"turn_text", "turn_vector"} <= set(found["imported-1"]["imputed"])


def test_a_recorded_session_whose_turns_miss_is_not_scored_as_written(wiki: Daemon) -> None:
    """The other side: a session with recorded turns, found only by words added to its page by
    hand, keeps its turn features (none of its turns says them), not the page's own."""
    base = {"session_id": "rec-1", "cwd": "/home/dev/acme-api"}
    wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "Start the nightly deploy."})
    wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    page = lambda: next((h["path"] for h in query(wiki, "nightly deploy")["hits"] if h["session_id"] == "rec-1"),  # noqa: E731
                        None)
    wait_until(page, timeout=30, step=0.2)
    path = wiki.data_dir / "wiki" / page()
    path.write_text(path.read_text() + "\nThe quokkaflume rollback plan was agreed afterwards.\n")

    def found() -> dict | None:
        hit = next((h for h in query(wiki, "quokkaflume rollback")["hits"] if h["session_id"] == "rec-1"), None)
        return hit["explain"] if hit and settled(wiki) else None

    wait_until(found, timeout=30, step=0.2)
    explain = found()
    assert explain is not None and explain["imputed"] == []
    assert explain["features"]["turn_text"] == 0.0 and explain["features"]["page_text"] > 0


def test_late_interaction_spends_its_budget_on_the_best_turns_first() -> None:
    """Every candidate's best turns come before any other reached turn; the others are taken a
    candidate at a time, so one long session cannot use up the budget alone."""
    best = {1: [10], 2: [20]}
    reached = {1: [10, 11, 12, 13], 2: [21, 20]}
    assert most_wanted_first(best, reached) == [10, 20, 21, 11, 12, 13]


def test_a_written_page_is_scored_as_its_own_best_turn() -> None:
    features = {"page_text": 0.8, "chunk_vector": 0.4, "rrf": 1.0}
    own = as_its_own_turn(features, ["turn_text", "turn_vector", "token_match"])
    assert own["turn_text"] == 0.8 and own["turn_vector"] == 0.4 and own["token_match"] == pytest.approx(0.6)
    assert "session_tokens" not in own  # not measured for this search's sessions: nobody has it
    assert as_its_own_turn(features, []) == features


def test_the_session_that_set_out_to_change_it_leads_on_its_title() -> None:
    """Two sessions touched the query timeout; only one was asked to fix it. The title feature
    tells them apart, and the rarer the words its title shares, the more."""
    from ai_memory.retrieval.features import FEATURES, Candidate

    title = next(f for f in FEATURES if f.name == "title")
    terms = query_terms("fix the query timeout in the exporter")
    idf = {t: 1.0 for t in terms} | {"timeout": 3.0, "export": 3.0}

    def value(page_title: str) -> float:
        return title.value(Candidate(row={"title": page_title}, rrf=1.0, streams={}, late={}, passage=(),
                                     terms=terms, words=[], idf=idf, ranges=[], question=""))

    asked = value("Fix the query timeout in the exporter")
    in_passing = value("Fix flaky login test")
    assert asked == pytest.approx(1.0) and 0 < in_passing < 0.2
    assert value("Exporter timeout") > value("Fix query")  # rare words weigh more
    assert value("") == 0.0


def test_an_edit_is_read_as_what_it_took_out_and_put_in() -> None:
    from ai_memory.core.tool_text import edit_sides, tool_body
    from ai_memory.core.work_text import edits_of
    from ai_memory.retrieval.rerank import changed_terms

    edit = tool_body("Edit", {"file_path": "/r/ci.yml", "old_string": "python: [3.9, 3.10]",
                              "new_string": "python: [3.10]"}, None, None)
    assert changed_terms(edit) == (frozenset({"3.9"}), frozenset())  # python and 3.10 were kept
    many = tool_body("MultiEdit", {"file_path": "/r/a.py", "edits": [
        {"old_string": "retries = 3", "new_string": "retries = 5"},
        {"old_string": "", "new_string": "def backoff(): ..."}]}, None, None)
    assert edit_sides(many) == ("retries = 3", "retries = 5\ndef backoff(): ...")
    patch = tool_body("apply_patch", {"input": "--- a/x.py\n+++ b/x.py\n-old_name = 1\n+new_name = 1\n"}, None, None)
    assert "old_name" in changed_terms(patch)[0] and "new_name" in changed_terms(patch)[1]
    written = tool_body("Write", {"file_path": "/r/NOTES.md", "content": "# Notes\n---\nall new"}, None, None)
    assert edit_sides(written) == ("", "# Notes\n---\nall new")  # a file's own "---" is no mark
    assert edit_sides(tool_body("Bash", {"command": "echo '--- old'"}, "--- new", None)) == ("", "")
    editor = tool_body("str_replace_editor", {"command": "str_replace", "path": "/r/a.py", "old_str": "a = 1",
                                              "new_str": "b = 2"}, None, None)
    assert edit_sides(editor) == ("a = 1", "b = 2")  # the text editor tool's own keys
    assert "--- patch" not in editor  # its "command" is the sub-command, "str_replace": no patch
    assert edits_of({"command": "view", "path": "/r/a.py"}) == ("/r/a.py", [])  # a view changes nothing
    failed = tool_body("Edit", {"file_path": "/r/a.py", "old_string": "a = 1", "new_string": "b = 2"},
                       "String to replace not found in file", None, failed=True)
    assert edit_sides(failed) == ("", "")  # the file was left as it was
    cut = tool_body("Edit", {"file_path": "/r/a.py", "old_string": "x = 1\n" * 3000, "new_string": "y"}, None, None)
    assert edit_sides(cut) == ("", "")  # its new text may be what the bound cut off


def test_a_query_about_what_was_removed_prefers_the_edit_that_removed_it() -> None:
    from ai_memory.core.tool_text import tool_body
    from ai_memory.retrieval.rerank import TAKEN_OUT, asked_change, direction

    def passage(old: str, new: str) -> tuple[str, ...]:
        return ("CI matrix", tool_body("Edit", {"file_path": "/r/ci.yml", "old_string": old, "new_string": new},
                                       None, None))

    dropped, listed = passage("- 3.9\n- 3.10", "- 3.10"), passage("- 3.6\n- 3.9\n- 3.10", "- 3.9\n- 3.10")
    words = ["Dropped", "Python", "3.9", "support"]
    terms = query_terms(" ".join(words))
    assert direction(terms, words, dropped) > 0 and direction(terms, words, listed) == 0.0
    assert asked_change(["Python", "3.9", "version"]) is None
    assert direction(terms, ["Python", "3.9", "version"], dropped) == 0.0  # no verb: not asked
    assert asked_change(["does", "it", "support", "gzip"]) is None and asked_change(["longer", "timeouts"]) is None
    no_longer = ["Python", "3.9", "is", "no", "longer", "tested"]
    side, asking = asked_change(no_longer)
    assert side == TAKEN_OUT and "longer" in asking  # "longer" is asking, not looked for
    assert direction(query_terms("Python 3.9 is no longer tested"), no_longer, dropped) > 0
    added = ["Added", "Python", "3.10"]
    assert direction(query_terms("Added Python 3.10"), added, passage("- 3.9", "- 3.9\n- 3.10")) > 0
    assert direction(query_terms("Added Python 3.10"), added, ("a prompt", "a reply")) == 0.0


def test_cosines_a_hair_apart_are_not_spread_over_the_whole_scale() -> None:
    from ai_memory.retrieval.rerank import normalize
    from ai_memory.retrieval.search import COSINE_SPREAD

    close = normalize({1: 0.61, 2: 0.60}, COSINE_SPREAD)
    assert close[1] == 1.0 and close[2] == pytest.approx(0.9)  # not 1 against 0
    apart = normalize({1: 0.8, 2: 0.5, 3: 0.2}, COSINE_SPREAD)
    assert apart == pytest.approx({1: 1.0, 2: 0.5, 3: 0.0})  # a real spread is scaled as before


def test_sentences_of_a_turn() -> None:
    text = "We shipped it. The rollout took two hours on Friday. Thanks! Next we migrate the ledger tables."
    assert sentences(text) == ["We shipped it.", "The rollout took two hours on Friday.",
                               "Next we migrate the ledger tables."]  # "Thanks!" says nothing alone
    assert sentences("One sentence only, nothing to split.") == []


def test_a_when_question_prefers_a_passage_that_says_when() -> None:
    assert asks_when("When did Ana move to Lisbon?") and asks_when("what year was the ledger migrated")
    assert not asks_when("What did Ana bring to the party?")
    assert answer_type("When did Ana move?", lambda: "Ana: I moved there last spring.") == 1.0
    assert answer_type("When did Ana move?", lambda: "Ana: I love the city.") == 0.0
    assert answer_type("Where did Ana move?", lambda: "Ana: I moved there last spring.") == 0.0
    assert answer_type("When did Ana move?", lambda: "Ana: This may fail on port 2049.") == 0.0


def test_a_how_many_question_prefers_a_passage_that_gives_a_number() -> None:
    assert answer_type("How many retries did we set?", lambda: "Ana: We set 5 retries on the client.") == 1.0
    assert answer_type("How often does the backup run?", lambda: "Ana: It runs twice a day.") == 1.0
    assert answer_type("How many retries did we set?", lambda: "Ana: Retries are on for the client.") == 0.0
    assert answer_type("How many retries did we set?", lambda: "Ana: That one is the retry I mean.") == 0.0
    assert answer_type("How did the retries go?", lambda: "Ana: We set 5 retries.") == 0.0
    assert answer_type("How far is the office?", lambda: "Ana: It is 3km from here.") == 1.0
    assert answer_type("How often do we deploy?", lambda: "Ana: Once a week, on Tuesdays.") == 1.0
    for not_a_count in ("Ana: See PR #123.", "Ana: Shipped on 2023-05-08.", "Ana: Pinned to v1.2.3 now."):
        assert answer_type("How many retries did we set?", lambda: not_a_count) == 0.0, not_a_count


def test_a_turn_is_scored_in_context_of_its_session_neighbours() -> None:
    sessions = {10: "a", 11: "a", 12: "a", 13: "b"}
    scored = in_context({11: 2.0, 13: 1.0}, sessions)
    assert scored[11] == 2.0 and scored[13] == 1.0  # 13 is in another session: no context from 12's neighbour
    assert scored[10] == scored[12] == CONTEXT_WEIGHT * 2.0  # the answer beside a matching question
    assert 14 not in scored  # unknown observation (a session marker, or none)


def test_query_terms_drop_possessives_and_lone_letters() -> None:
    assert query_words("What are Caroline's plans for the summer?") == ["Caroline", "plans", "summer"]
    assert query_terms("What are Caroline's plans for the summer?") == ["carolin", "plan", "summer"]
    assert query_terms("deploy on 1 May") == ["deploy", "1", "may"]
    assert query_terms("a") == ["a"]  # nothing else left: keep what there is


def test_a_dotted_path_in_a_query_is_looked_for_by_the_names_it_is_made_of() -> None:
    # The code defines and calls is_default_port; a changelog writes yarl.URL.is_default_port.
    assert query_terms("yarl.URL.is_default_port") == ["yarl.url.is_default_port", "is_default_port", "yarl",
                                                       "url", "is", "default", "port"]
    assert query_terms("URL.joinPath") == ["url.joinpath", "joinpath", "url", "join", "path"]
    assert query_terms("yarl/_url.py") == ["yarl", "_url.py", "_url", "url", "py"]  # a path stays a path
    assert query_terms("version 1.7.1") == ["version", "1.7.1"]
    assert query_terms("upside-down") == ["upside-down", "upsid", "down"]  # prose keeps its words


def test_yearless_day_takes_the_named_year_or_any_year() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    first, last = parse_ranges("between August 11 and August 15 2023", now)
    assert (first.start.isoformat(), first.any_year, last.end.isoformat()) == ("2023-08-11", False, "2023-08-15")
    (day,) = parse_ranges("what broke on March 3rd", now)
    assert day.any_year and day.contains(datetime(2021, 3, 3).date()) and not day.contains(datetime(2021, 3, 4).date())
    assert parse_ranges("plans for the summer", now) == []  # not a time filter
    assert parse_ranges("what we did during the summer", now)


def test_numbers_and_verbs_are_not_dates_to_the_filter_or_the_query_vector() -> None:
    """One set of rules decides what is a date, for the temporal feature and for the text that
    is embedded alike: a port or an error code is no year, "may" the verb no month."""
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for text in ("step 1 may fail on deploy", "why does port 2048 refuse", "error 2024 in the gateway"):
        assert parse_ranges(text, now) == [] and without_dates(text) == text
    (day,) = parse_ranges("what broke on 3 february", now)  # no verb to mistake: a date in any case
    assert day.contains(datetime(2024, 2, 3).date()) and without_dates("what broke on 3 february") == "what broke"
    (year,) = parse_ranges("what broke in 2024", now)
    assert (year.start.isoformat(), year.end.isoformat()) == ("2024-01-01", "2024-12-31")


def test_the_query_vector_reads_what_is_asked_not_its_calendar_dates() -> None:
    assert without_dates("What did Gina order for the store on 1 February, 2023?") == \
        "What did Gina order for the store?"
    assert without_dates("Where was John between August 11 and August 15 2023?") == "Where was John?"
    assert without_dates("what changed in the auth module on 2024-05-01") == "what changed in the auth module"
    assert without_dates("What did John do last weekend?") == "What did John do last weekend?"  # said in turns too
    assert without_dates("2023") == "2023"  # nothing else to embed
    assert without_dates("why does port 2048 refuse in 2024") == "why does port 2048 refuse"  # a number, a year
    assert without_dates("step 1 may fail on 3 May") == "step 1 may fail"  # "may" the verb, "May" the month


def test_search_works_with_embeddings_disabled(daemon: Daemon) -> None:
    path = daemon.data_dir / "wiki" / "acme-api" / "notes" / "x.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page_text("Cache", "The cache uses `CACHE_TTL_SECONDS`."))
    wait_until(lambda: daemon.request("POST", "/v1/query", {"q": "CACHE_TTL_SECONDS"})[1]["hits"], timeout=5)
    body = daemon.request("POST", "/v1/query", {"q": "CACHE_TTL_SECONDS"})[1]
    assert "vectors" not in body["streams"] and body["hits"][0]["path"] == "acme-api/notes/x.md"
    assert daemon.request("GET", "/status")[1]["embeddings"] == {"enabled": False}


def test_turns_of_other_projects_never_crowd_out_this_ones(daemon: Daemon) -> None:
    """500 louder matching turns in another project, more than the turn streams read: the
    query's own project still gets its turn, found by the turn stream itself."""
    for i in range(500):
        daemon.post_hook({"session_id": "loud", "hook_event_name": "UserPromptSubmit", "cwd": "/home/dev/other-app",
                          "prompt": f"zephyrgale zephyrgale zephyrgale run {i}"})
    base = {"session_id": "quiet", "cwd": "/home/dev/acme-api"}
    daemon.post_hook({**base, "hook_event_name": "UserPromptSubmit",
                      "prompt": "The long story of the deploy, which once mentioned a zephyrgale in passing, ends."})
    for sid in ("loud", "quiet"):
        daemon.post_hook({"session_id": sid, "hook_event_name": "SessionEnd", "reason": "other",
                          "cwd": base["cwd"] if sid == "quiet" else "/home/dev/other-app"})

    def found() -> dict | None:
        body = daemon.request("POST", "/v1/query", {"q": "zephyrgale", "project": "acme-api", "explain": True})[1]
        return next((h for h in body["hits"] if h["session_id"] == "quiet"), None)

    wait_until(found, timeout=20)
    hit = found()
    assert hit is not None and "turns_fts" in hit["explain"]["streams"]
    assert "zephyrgale" in hit["evidence"][0]["snippet"]


def test_pages_of_other_projects_never_crowd_out_this_ones(tmp_path: Path) -> None:
    """120 pages of another project say the word louder than this project's one page, more
    than the text and entity streams read: the page is still found, by full text."""
    data = tmp_path / "data"
    for i in range(120):
        path = data / "wiki" / "other-app" / "notes" / f"loud-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page_text(f"Zephyrgale {i}", "Zephyrgale zephyrgale zephyrgale.", project="other-app"))
    quiet = data / "wiki" / "acme-api" / "notes" / "story.md"
    quiet.parent.mkdir(parents=True, exist_ok=True)
    quiet.write_text(page_text("Deploy story", "The long story of the deploy, which once mentioned a zephyrgale "
                                                "in passing, and then went on about other things entirely."))
    daemon = Daemon(data).start()
    try:
        def found() -> dict | None:
            body = daemon.request("POST", "/v1/query", {"q": "zephyrgale", "project": "acme-api", "explain": True})[1]
            return hit_for(body, "acme-api/notes/story.md")

        wait_until(found, timeout=20)
        assert "fts" in found()["explain"]["streams"]
        everywhere = daemon.request("POST", "/v1/query", {"q": "zephyrgale", "all": True, "k": 5})[1]
        assert {h["project"] for h in everywhere["hits"]} == {"other-app"}  # louder, when all are asked
    finally:
        daemon.stop()


def test_search_cli(wiki: Daemon) -> None:
    from conftest import run_cli

    done = run_cli(wiki.data_dir, "search", "RATE_LIMIT_BURST", "--project", "acme-api", "--explain",
                   "--url", wiki.url)
    assert done.returncode == 0, done.stderr
    assert "acme-api/notes/limits.md" in done.stdout and "streams: fts #1" in done.stdout
    bad = run_cli(wiki.data_dir, "search", "x", "-k", "0", "--url", wiki.url)
    assert bad.returncode == 1 and "k must be at least 1" in bad.stderr


def test_a_decision_edges_out_the_session_that_discussed_it(wiki: Daemon) -> None:
    """A session has turn-level evidence (turn text, turn vectors, late interaction) that a
    written page cannot have. The page is scored as its own best turn; scored as zero there,
    maintained knowledge would lose every close contest to the chatter it came from."""
    sid = "decide-1"
    base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
    wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit",
                    "prompt": "We compared MySQL and Postgres for the ledger and chose Postgres."})
    wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    wait_until(lambda: settled(wiki) and any(h["session_id"] == sid for h in query(wiki, "ledger Postgres")["hits"]),
               timeout=30, step=0.2)
    hits = query(wiki, "Which database did we choose for the ledger?")["hits"]
    order = [h["session_id"] or h["path"] for h in hits]
    assert sid in order and "acme-api/decisions/new-db.md" in order, order
    assert order.index("acme-api/decisions/new-db.md") < order.index(sid), [(h["path"], h["score"]) for h in hits[:3]]


def test_a_session_on_the_named_day_beats_one_months_away(wiki: Daemon) -> None:
    """A query naming a day ("on 3 June 2025") is asking about that day: of two sessions that
    match its words alike, the one held then comes first, whichever the words alone favour."""
    sessions = {
        "retry-june": ("2025-06-03T10:00:00+00:00", "I lowered the retry limit of the invoice worker."),
        "retry-march": ("2025-03-10T10:00:00+00:00", "I lowered the retry limit of the invoice worker."),
    }
    for sid, (stamp, prompt) in sessions.items():
        base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
        wiki.post_hook({**base, "hook_event_name": "SessionStart", "source": "startup", "timestamp": stamp})
        wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt, "timestamp": stamp})
        wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other", "timestamp": stamp})
    q = "What changed about the invoice worker retry limit on 3 June 2025?"

    def both() -> list[str] | None:
        order = [h["session_id"] for h in query(wiki, q)["hits"]]
        return order if settled(wiki) and set(sessions) <= set(order) else None

    wait_until(both, timeout=30, step=0.2)
    order = both()
    assert order is not None and order.index("retry-june") < order.index("retry-march"), order
    march = [h["session_id"] for h in query(wiki, q.replace("3 June", "10 March"))["hits"]]
    assert march.index("retry-march") < march.index("retry-june"), march


def test_one_process_holds_the_model_and_no_torch(wiki: Daemon) -> None:
    """The daemon searches and embeds in its own process, with OpenVINO; torch, the test oracle's
    runtime, is never loaded, and no second process holds a copy of the model."""
    status = wiki.request("GET", "/status")[1]
    assert status["embeddings"]["ready"] and status["embeddings"]["precision"] in ("float32", "bfloat16")
    maps = Path(f"/proc/{wiki.proc.pid}/maps").read_text()
    assert "libopenvino" in maps and "libtorch" not in maps
    children = [task for task in Path(f"/proc/{wiki.proc.pid}/task").iterdir()
                for _ in (task / "children").read_text().split()]
    assert children == [], children


# Last in the module: its six turns change the words' rarity that the late-interaction tests
# above were written against (their margins are a few thousandths).
def test_evidence_shows_the_reply_beside_the_best_turn(wiki: Daemon) -> None:
    """The turn that matches a question best is often the question asked before: the reply
    beside it, in other words, is shown as evidence too, though other turns match better."""
    sid = "ev-context"
    base = {"session_id": sid, "cwd": "/home/dev/acme-api"}
    for prompt in ("Which colour should we paint the garden shed door?",
                   "Forest green, two coats, like the gate.",
                   "The garden shed door paint is peeling again.",
                   "Paint for the garden shed door: buy it at the hardware store.",
                   "The garden shed door colour must match the fence paint.",
                   "Sand the garden shed door before the paint goes on."):
        wiki.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    wiki.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "other"})
    q = "Which colour should we paint the garden shed door?"
    wait_until(lambda: settled(wiki) and any(h["session_id"] == sid for h in query(wiki, q)["hits"]),
               timeout=30, step=0.2)
    hit = next(h for h in query(wiki, q)["hits"] if h["session_id"] == sid)
    snippets = [e["snippet"] for e in hit["evidence"]]
    assert "Which colour" in snippets[0] and any("Forest green" in s for s in snippets), snippets
