"""One analysis of text for the index, the query and the reranker: code read as code."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.core.terms import index_text, query_words, stem, terms, token_terms, words
from ai_memory.core.tool_text import readable, tool_body
from ai_memory.core.work_text import edit_passages, failure_passages, tool_passages


def test_identifiers_are_kept_whole_and_split_into_stemmed_parts() -> None:
    assert terms("update_query") == ["update_query", "updat", "queri"]
    assert terms("QueryVariable") == ["queryvariable", "queri", "variabl"]
    assert terms("HTTPServer") == ["httpserver", "http", "server"]
    assert terms("__eq__") == ["__eq__", "eq"]
    assert terms("kw_only") == ["kw_only", "kw", "onli"]
    assert terms("yarl.URL.build") == ["yarl.url.build", "yarl", "url", "build"]


def test_a_dotted_path_holds_the_names_it_is_made_of_whole() -> None:
    # A changelog writes URL.with_name; the edit that changed it holds "def with_name(".
    assert terms("URL.with_name") == ["url.with_name", "with_name", "url", "with", "name"]
    indexed = set(index_text("Improve performance of URL.with_name").split())
    assert set(index_text("def with_name(self, name): ...").split()) & indexed >= {"with_name", "name"}


def test_a_path_gives_its_segments_and_their_parts() -> None:
    assert terms("yarl/_url.py") == ["yarl", "_url.py", "_url", "url", "py"]


def test_words_share_one_stemmer_and_numbers_stay_as_written() -> None:
    assert terms("updating the queries") == [stem("updating"), "the", stem("queries")]
    assert stem("updating") == stem("updated") == stem("update") == "updat"
    assert terms("Python 3.7.6") == ["python", "3.7.6"]
    assert terms("the end. Next") == ["the", "end", "next"]  # a full stop is not part of a name


def test_a_version_inside_a_name_is_found_by_the_plain_number() -> None:
    # "what changed in 1.7.1" meets the tag v1.7.1; "drop 3.13" meets the free-threaded 3.13t.
    assert terms("v1.7.1") == ["v1.7.1", "1.7.1", "v", "1", "7"]
    assert "3.13" in terms("python-version: 3.13t") and "3.11" in terms("python3.11 -m venv")
    assert "2.0" in terms("2.0rc1")
    assert terms("3.13.1") == ["3.13.1"]  # a plain version is one term, not its prefixes
    assert "1.2" not in terms("v1.2.3")


def test_a_hostile_version_shaped_token_is_read_in_one_pass() -> None:
    """A page someone else wrote may hold a 200,000-character token of ".1" groups: backtracking
    over it took a minute inside the writer's transaction. The bound is sixty times what one
    pass takes on a loaded 2-core machine: a hang guard, not a speed target."""
    import time

    token = "v" + "1." * 100_000 + ".1"
    started = time.monotonic()
    assert "v" in terms(token)
    assert time.monotonic() - started < 10


def test_a_query_word_finds_the_identifier_it_names() -> None:
    indexed = set(index_text("def update_query(self, query): ...").split())
    assert {"updat", "queri"} <= indexed  # "updating the query" reaches the method
    assert "update_query" in indexed  # and its name, whole


def test_query_words_drop_stopwords_possessives_and_lone_letters() -> None:
    assert query_words("What are Caroline's plans for a summer?") == ["Caroline", "plans", "summer"]
    assert query_words("the") == ["the"]  # nothing else left: keep what there is


def test_tool_bodies_are_readable_lines_never_escaped_json() -> None:
    body = tool_body("Bash", {"command": "pytest -q"}, {"stdout": "one\ntwo", "interrupted": False}, None)
    assert "one\ntwo" in body and "\\n" not in body and "interrupted" not in body
    edit = tool_body("Edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
                     {"originalFile": "x = 1\n" * 1000, "success": True}, None)
    assert edit == "tool: Edit\nfile: a.py\n--- old\nx = 1\n--- new\nx = 2"  # the original file is left out
    assert len(readable("line\n" * 10_000, 100)) <= 100


def test_an_edit_is_embedded_by_what_it_changed() -> None:
    old = "import os\n\ndef quote(value):\n    return value\n"
    new = "import os\n\ndef quote(value):\n    # keep the brackets of an IPv6 host\n    return requote_host(value)\n"
    passages = edit_passages("yarl/_url.py", [(old, new)])
    assert len(passages) == 1
    text = passages[0]
    assert text.startswith("yarl/_url.py (url)")
    assert "keep the brackets of an IPv6 host" in text and "requote_host (requote host)" in text
    assert "def quote(value)" in text  # the definition the change sits in
    assert "import os" not in text  # kept as it was, and an import


def test_a_long_edit_is_passages_not_cut() -> None:
    new = "\n".join(f"value_{i} = compute_{i}(x)  # step {i}" for i in range(400))
    passages = edit_passages("big.py", [("", new)])
    assert 1 < len(passages) <= 8 and all(len(p.split()) <= 130 for p in passages)


def test_a_commands_error_lines_are_embedded_with_the_command() -> None:
    out = "collected 3 items\n...\nTraceback (most recent call last):\n  File x\nValueError: port out of range\n"
    assert failure_passages("pytest -q", out) == [
        "pytest -q\nTraceback (most recent call last):\nFile x\nValueError: port out of range"]
    ok = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a.py b.py"}}
    assert tool_passages("Bash", ok) == []  # nothing failed: nothing to embed
    assert tool_passages("Read", {"tool_input": {"file_path": "a.py"}, "tool_response": "ValueError"}) == []


_PASSAGE_TEXTS = st.lists(st.sampled_from(["Alice's", "retry_worker", "\n", " ", "q.v-w", "’s", "s", "URL", "it's\n",
                                           "x/y.py", "camelCase", "--", "3.11", "\r\n", "é"]), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PASSAGE_TEXTS, max_size=5), st.integers(1, 200))
def test_a_passage_read_text_by_text_has_the_terms_of_the_whole(texts: list[str], chars: int) -> None:
    """A passage's texts are read one by one, line by line (each kept for the next search), and
    give what the whole passage read as one text would: every term, every pair of words side
    by side, across lines and texts, up to the passage's bound."""
    from ai_memory.retrieval import rerank

    whole = [token_terms(w) for w in words("\n".join(texts)[:chars])]
    heads = [ts[0] for ts in whole]
    terms, pairs = {t for ts in whole for t in ts}, set(zip(heads, heads[1:]))
    everywhere = [token_terms(w) for w in words("\n".join(texts))] + whole  # past the bound too
    asked = {t for ts in everywhere for t in ts} | {"absent"}
    read = rerank._analysed.__wrapped__(tuple(texts), chars)
    assert {t for t in asked if read.has(t)} == terms
    assert {(a[0], b[0]) for a in everywhere for b in everywhere if read.side_by_side((a[0], b[0]))} == pairs


def test_a_word_common_as_it_is_is_not_also_matched_by_prefix_on_a_large_memory() -> None:
    """The prefix of a word on many pages costs FTS5 the doclist of every longer form, for
    little weight; a rare word, an identifier and any word of a small memory keep theirs."""
    from ai_memory.retrieval.fts import TermStats, match_expression

    large = TermStats(pages=10_000, df={"model": 500, "auth": 3, "handler_models.py": 900})
    assert large.found_whole() == {"model", "handler_models.py"}
    expr = match_expression("auth model in handler_models.py", whole_only=large.found_whole())
    assert expr is not None and '"auth"*' in expr and '"model"' in expr and '"model"*' not in expr
    assert '"handler_models.py"*' not in expr and '"handler"*' in expr
    small = TermStats(pages=40, df={"model": 30})
    assert small.found_whole() == frozenset()
