"""Links as Obsidian reads and resolves them (core.links), on bodies and file lists."""

from __future__ import annotations

import pytest
import yaml

from ai_memory.core.links import Vault, aliases_of, parse_body
from ai_memory.core.page import _loader_for, parse_page, split_frontmatter


def links(body: str) -> list[str]:
    return parse_body(body).links


def test_code_blocks_and_code_spans_hold_no_links() -> None:
    body = ("```sh\nif [[ -f \"$x\" ]]; then :; fi\n```\n\n    [[ indented code ]]\n\n"
            "Inline `[[ $a == b ]]` too, but [[Real note]] is one.\n")
    assert links(body) == ["Real note"]


@pytest.mark.parametrize(("body", "target"), [
    ("[[Note]]", "Note"), ("[[Note|shown]]", "Note"), ("[[Note#Heading]]", "Note"),
    ("[[Note#Heading|shown]]", "Note"), ("[[Note^block-id]]", "Note"), ("![[diagram.png]]", "diagram.png"),
    ("![[diagram.png|300]]", "diagram.png"), ("[t](sub/My%20note.md#part)", "sub/My note.md"),
    ("![alt](attachments/x.png)", "attachments/x.png"), ("[t](<with space.md>)", "with space.md"),
    ("| a | [[Table note\\|alias]] |\n|---|---|\n| 1 | 2 |", "Table note"),
    ("[[acme-api:decisions/ttl]]", "acme-api:decisions/ttl"),
])
def test_each_form_of_link_names_its_target(body: str, target: str) -> None:
    assert links(body) == [target]


@pytest.mark.parametrize("body", [
    "[site](https://example.com/x.md)", "[mail](mailto:a@b.c)", "[top](#heading)", "[[#Heading]]",
    "\\[[escaped]]", "[[]]", "[[two\nlines]]",
])
def test_what_is_no_link_into_the_vault(body: str) -> None:
    assert links(body) == []


def test_the_first_heading_is_the_title_of_a_plain_note() -> None:
    page = parse_page("Journal/day.md", b"Some text first.\n\n```\n# not a heading\n```\n\n## Real title ##\n")
    assert page.type == "Note" and page.title == "Real title" and page.problems == []
    assert parse_page("Journal/no-heading.md", b"Just words.\n").title == "no-heading"
    assert parse_page("x/setext.md", b"Setext title\n============\n\nbody\n").title == "Setext title"


def test_frontmatter_without_a_type_is_a_note_and_an_unknown_type_is_a_problem() -> None:
    assert parse_page("a/b.md", b"---\naliases: [B]\n---\n# B\n").problems == []
    assert parse_page("a/c.md", b"---\ntype: Recipe\n---\n# C\n").problems == ["unknown type 'Recipe'"]


VAULT = Vault(
    ["Concepts/Retry budget.md", "Journal/2026-01-05.md", "attachments/diagram.png", "Plans/q1 plan.md",
     "a/sub/note.md", "b/note.md", "acme-api/decisions/ttl.md", "README.md"],
    {"Concepts/Retry budget.md": ["RB"]},
)


@pytest.mark.parametrize(("target", "source", "found"), [
    ("Retry budget", "Journal/2026-01-05.md", ["Concepts/Retry budget.md"]),  # by file name
    ("retry BUDGET", "x.md", ["Concepts/Retry budget.md"]),  # any case
    ("Retry budget.md", "x.md", ["Concepts/Retry budget.md"]),
    ("RB", "x.md", ["Concepts/Retry budget.md"]),  # an alias
    ("diagram.png", "Journal/2026-01-05.md", ["attachments/diagram.png"]),  # an attachment, by name
    ("Plans/q1 plan", "x.md", ["Plans/q1 plan.md"]),  # a path from the root
    ("../Plans/q1 plan.md", "Journal/2026-01-05.md", ["Plans/q1 plan.md"]),  # relative to the page
    ("sub/note", "x.md", ["a/sub/note.md"]),  # a partial path: only the file it ends
    ("note", "x.md", ["a/sub/note.md", "b/note.md"]),  # a name two files have: both
    ("acme-api:decisions/ttl", "web/x.md", ["acme-api/decisions/ttl.md"]),  # ai-memory's cross-project form
    ("README", "x.md", ["README.md"]),  # any file counts, indexed or not
    ("diagram", "x.md", []),  # without its extension, only a .md file is meant
    ("Postmortem", "x.md", []),
    ("other/note", "x.md", []),
])
def test_resolution_follows_obsidian(target: str, source: str, found: list[str]) -> None:
    assert VAULT.resolve(target, source) == found


def test_aliases_come_as_a_list_or_one_name() -> None:
    assert aliases_of({"aliases": ["AI", "ML"]}) == ["AI", "ML"]
    assert aliases_of({"aliases": "AI"}) == ["AI"] and aliases_of({"alias": "K8s"}) == ["K8s"]
    assert aliases_of({"aliases": None}) == [] and aliases_of({"aliases": [{"x": 1}, " "]}) == []


def test_frontmatter_reads_the_same_whichever_parser_reads_it() -> None:
    """libyaml reads a text that cannot hold an alias; a "*" anywhere (here in a comment, which
    changes nothing) sends it through the guarded parser: the same frontmatter either way, and
    an alias is still refused."""
    source = ("type: Decision\ntitle: 'Retry: why 3'\ntags: [x, y]\nwhen: 2026-01-05\npinned: true\n"
              "relations:\n  fixes: [acme/gotchas/stale]\nsummary: >\n  folded\n  text\n")
    assert "*" not in source and _loader_for(source) is yaml.CSafeLoader  # the fast path is the one tested
    starred = "# a * in a comment\n" + source
    assert _loader_for(starred) is not yaml.CSafeLoader
    fast, guarded = (split_frontmatter(f"---\n{text}---\nbody\n") for text in (source, starred))
    assert fast == guarded and fast[2] == [] and fast[0]["title"] == "Retry: why 3"
    aliased = parse_page("a/q.md", b"---\ntype: Note\na: &x [1]\nb: *x\n---\nbody\n")
    assert any("aliases" in problem for problem in aliased.problems)


def test_a_past_version_is_read_without_its_body_links() -> None:
    raw = b"---\ntype: Decision\ntitle: TTL\nrelations: {fixes: [acme/gotchas/stale]}\n---\nSee [[Retry budget]].\n"
    path = "acme/decisions/ttl.md"
    whole, version = parse_page(path, raw), parse_page(path, raw, body_links=False)
    assert ("Retry budget", "link") in whole.links and ("Retry budget", "link") not in version.links
    assert version.links == [("acme/gotchas/stale", "fixes")]  # the frontmatter's relations stay
    assert (whole.title, whole.body, whole.content_hash) == (version.title, version.body, version.content_hash)


@pytest.mark.parametrize("nested", ["[" * 999 + "]" * 999, "{a: " * 300 + "1" + "}" * 300])
def test_frontmatter_nested_past_any_use_is_a_broken_page(nested: str) -> None:
    # libyaml reads a thousand levels; storing them as JSON would recurse past Python's stack
    page = parse_page("a/deep.md", f"---\ntype: Note\nx: {nested}\n---\nbody\n".encode())
    assert page.problems == ["bad frontmatter: nested too deeply"] and page.meta == {}
    assert parse_page("a/ok.md", b"---\ntype: Note\nx: {a: [1, {b: [2]}]}\n---\nbody\n").problems == []
