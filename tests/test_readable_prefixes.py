"""A snippet reads a long text only as far as it needs, and is the one reading it whole gives."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.core.readable import readable, readable_prefixes
from ai_memory.retrieval.fts import _first_word, highlights, make_snippet, parts_snippet

# Lines that make markdown change its mind: fences, tables, setext headings, reference links,
# lists, quotes, indented code, emphasis across lines, JSON lines, blank lines.
LINES = ["", "   ", "```", "~~~", "| a | b |", "|---|---|", "| c | d |", "===", "---", "# head", "[ref]",
         "[ref]: /target", "> [ref]: /target", "- [ref]: /target", "see [ref] here", "- item one", "  continued", "> quoted", "    indented code",
         "*start of", "emphasis*", "snake_case_name", '{"stdout": "Created x", "ok": true}', "<!-- note",
         "-->", "plain words follow", "retry worker queue", "&amp; \\_escaped\\_"]
texts = st.lists(st.sampled_from(LINES), min_size=1, max_size=400).map("\n".join)
# Past the length ``readable`` remembers, a snippet reads the text by beginnings.
long_texts = texts.map(lambda text: text + "\n\n" + "plain words follow\n\n" * 450)
words = st.lists(st.sampled_from(["retry", "worker", "queue", "snake_case_name", "ref", "head", "missing"]),
                 min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(texts, st.integers(min_value=0, max_value=3000))
def test_every_beginning_is_where_the_whole_begins(text: str, at_least: int) -> None:
    whole = readable(text)
    read = list(readable_prefixes(text, at_least))
    assert read[-1] == (whole, True) and all(not last for _, last in read[:-1])
    for head, _ in read[:-1]:
        assert head == "" or whole == head or whole.startswith(head + " ")


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, long_texts), words, st.sampled_from([160, 200]))
def test_a_snippet_is_the_one_the_whole_text_gives(text: str, terms: list[str], width: int) -> None:
    assert make_snippet(text, terms, width) == _read_whole(text, terms, width)


def _read_whole(text: str, terms: list[str], width: int) -> str:
    """The window around the first term of the whole text read at once."""
    return _read_whole_words(readable(text), terms, width)


def _read_whole_words(head: str, terms: list[str], width: int) -> str:
    found = _first_word(head, terms)
    if found is None:
        return head[:width].rstrip()
    start = max(0, found - width // 3)
    if start:
        space = head.rfind(" ", 0, start)
        start = space + 1 if space != -1 and found - space <= width // 2 else start
    return ("… " if start else "") + head[start:start + width].rstrip()


def test_a_long_text_is_read_only_as_far_as_its_first_match() -> None:
    text = "the retry worker drains the queue\n\n" + "\n\n".join(f"paragraph {i} of *other* words" for i in range(2000))
    read = list(readable_prefixes(text, 100))
    assert read[0][0].startswith("the retry worker") and len(read[0][0]) < 1_000
    assert make_snippet(text, ["retry"]) == readable(text)[:160].rstrip()


def test_a_reference_defined_further_on_makes_the_text_read_whole() -> None:
    text = "see [ref] here\n" + "plain words follow\n" * 60 + "\n> [ref]: /target\n"
    assert readable(text).startswith("see ref here")
    assert [whole for _, whole in readable_prefixes(text)] == [True]


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.sampled_from(["retry", "worker", "snake_case_name", "ref", "a.b", "b.c", "missing", ""]),
                       min_size=0, max_size=4))
def test_the_first_word_found_is_where_the_first_term_is_first_found(text: str, terms: list[str]) -> None:
    head = readable(text) + " a.b.c"
    each = [m.start() for m in (_whole_word(t).search(head) for t in terms if t) if m]
    assert _first_word(head, terms) == (min(each) if each else None)


def _whole_word(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])", re.I)


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.sampled_from(["retry", "worker", "snake_case_name", "ref", "a.b", "b.c", "a.b.c", "RETRY",
                                        "a.a", "1.1", ""]), min_size=0, max_size=4))
def test_highlights_cover_every_whole_word_occurrence_of_each_term(text: str, terms: list[str]) -> None:
    """One pass over the snippet marks every place where a term stands as a whole word, those
    that overlap ("1.1" twice in "1.1.1") too, merged."""
    head = readable(text) + " a.b.c 1.1.1 a.a.a"
    covered = sorted({i for t in terms if t for start in range(len(head))  # the lookbehind sees before start
                      if (m := _whole_word(t).match(head, start)) for i in range(*m.span())})
    marked = highlights(head, terms)
    assert [i for start, end in marked for i in range(start, end)] == covered
    assert all(a[1] < b[0] for a, b in zip(marked, marked[1:]))


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6), words)
def test_a_passage_of_several_texts_shows_the_window_of_their_words_joined(parts: list[str],
                                                                          terms: list[str]) -> None:
    joined = " ".join(w for w in (readable(part) for part in parts) if w)
    found = parts_snippet(parts, terms)
    assert found["snippet"] == _read_whole_words(joined, terms, 160)


def test_each_text_of_a_passage_is_read_on_its_own() -> None:
    """An underscore in one turn and one in the next are not emphasis across the two."""
    parts = ["Session", "edited yarl/_parse.py", "and x_ then foo"]
    assert "yarl/parse.py" in readable("\n".join(parts))  # read as one text, the two are emphasis
    assert parts_snippet(parts, ["parse"])["snippet"] == "Session edited yarl/_parse.py and x_ then foo"


# Pieces of lines where markdown might or might not see markup, joined at random.
PIECES = ["snake_case", "__dunder__", "_edge", "edge_", "a-b", " - ", "-", "--", "---", "===", "# ", "#", "> ", ">",
          "1. ", "1.", "2)", "1.5", "+ ", "+", "* ", "*", "`", "``` ", "~", "~~", "|", "[x]", "[[a]]", "\\", "&amp;",
          "&", "<b>", "<", "\x00", "    ", "   ", "\t", " ", "\n", "\n\n", "word", "x", "é", "_", "(_x_)", "a__b"]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_a_text_left_unparsed_reads_as_the_parser_reads_it(text: str) -> None:
    """The shortcut past the markdown parser never changes the words a text gives."""
    from ai_memory.core.readable import _MARKUP, _is_markdown, _words

    parsed_before = _MARKUP.search(text) is not None
    assert _words(text, _is_markdown(text)) == _words(text, parsed_before)


def test_a_tool_call_is_shown_as_written_and_one_recorded_as_json_by_its_values() -> None:
    code = "tool: Edit\n--- new\n# retries: *args and **kwargs\ndef wrap(fn, *args, **kwargs):\n    [x] = fn()"
    assert readable(code, markdown=False) == "tool: Edit --- new # retries: *args and **kwargs def wrap(fn, *args," \
                                             " **kwargs): [x] = fn()"
    assert "# retries" not in readable(code)  # read as markdown, the same text loses its code
    recorded = '{"stdout": "Created pod zephyrmoth", "noOutputExpected": false}'
    assert readable(recorded, markdown=False) == "Created pod zephyrmoth"
