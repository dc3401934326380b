"""The lines a hit shows (``ai-memory search`` and the web view): what each turn was, and an
edit's parts said in a word, its highlights still on the words the search matched."""

from __future__ import annotations

from ai_memory.core.hit_lines import answer_lines
from ai_memory.core.recall import edit_parts_said


def test_an_edit_reads_as_its_change_with_the_matched_words_still_marked() -> None:
    snippet = "--- old TOKEN_TTL = 5 --- new TOKEN_TTL = 15  # token lives 15 minutes"
    first, last = snippet.index("TOKEN_TTL"), snippet.rindex("token")
    marks = [[first, first + 9], [last, last + 5]]
    edited = {"event": "post-tool-use", "file": "/repo/src/auth.py", "snippet": snippet, "highlights": marks}
    hit = {"evidence": [edited,
                        {"event": "stop", "snippet": "Raised the TTL to 15 minutes.", "highlights": []},
                        {"event": "user-prompt", "snippet": "a third turn is not shown", "highlights": []}]}
    edit, reply = answer_lines(hit)
    assert edit["said"] == "changed /repo/src/auth.py" and reply["said"] == "replied"
    assert edit["snippet"] == "old: TOKEN_TTL = 5 new: TOKEN_TTL = 15  # token lives 15 minutes"
    assert [edit["snippet"][a:b] for a, b in edit["highlights"]] == ["TOKEN_TTL", "token"]


def test_a_highlight_on_a_marker_itself_is_dropped_and_plain_text_is_untouched() -> None:
    text, marks = edit_parts_said("--- new x", [[4, 7], [8, 9]])
    assert text == "new: x" and marks == [[5, 6]]
    assert edit_parts_said("no edit here --- really", [[0, 2]]) == ("no edit here --- really", [[0, 2]])
    assert answer_lines({"snippet": "a written page shows its own snippet"}) == []
