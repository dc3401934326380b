"""The projects file and the one-line frontmatter change: hostile or hand-made input never
breaks them, and a page is changed only where it says ``project: <old>``."""

from __future__ import annotations

import json
from pathlib import Path

from ai_memory.core.page import with_project
from ai_memory.core.project_map import PROJECTS_FILE, ProjectMap, parse, render
from ai_memory.wiki.project_moves import read_map


def test_renames_chain_and_a_name_can_be_taken_back() -> None:
    pmap = ProjectMap().renamed("a", "b").session_moved("s1", "b").renamed("b", "c")
    assert pmap.aliases == {"a": "c", "b": "c"} and pmap.sessions == {"s1": "c"}
    back = pmap.renamed("c", "a")
    assert back.aliases == {"b": "a", "c": "a"} and back.project_of("b") == "a" and back.project_of("a") == "a"
    assert back.project_of("anything", "s1") == "a" and parse(render(back)) == (back, [])


def test_a_bad_file_reads_as_empty_or_skips_what_is_not_a_name() -> None:
    assert parse(b"\xff not json")[0] == ProjectMap() and parse(b"\xff not json")[1]
    assert parse(b"[1, 2]")[0] == ProjectMap()
    cycle, _ = parse(json.dumps({"aliases": {"a": "b", "b": "a"}}).encode())
    assert cycle.aliases == {}  # a target that is itself an old name is no project: dropped
    mixed, problems = parse(json.dumps({"aliases": {"../etc": "x", "ok": "Not A Name", "old": "new"},
                                        "sessions": {"s\n1": "new", "s2": "old"}}).encode())
    assert mixed.aliases == {"old": "new"} and mixed.sessions == {"s2": "new"} and len(problems) == 3


def test_reserved_names_are_no_old_name_nor_target_and_problems_are_bounded() -> None:
    synced, problems = parse(json.dumps({"aliases": {"_global": "x", "_unsorted": "x", "y": "_global"}}).encode())
    assert synced.aliases == {} and len(problems) == 3  # every _global handoff moved to x: never
    many = {"aliases": {f"Bad Name {n}": "x" for n in range(500)}}
    pmap, problems = parse(json.dumps(many).encode())
    assert pmap == ProjectMap() and len(problems) == 21 and "480 more" in problems[-1]


def test_a_projects_file_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / ".ai-memory").mkdir()
    big = json.dumps({"aliases": {"old": "new"}, "pad": "x" * (1 << 20)}).encode()
    (tmp_path / PROJECTS_FILE).write_bytes(big)
    pmap, problems = read_map(tmp_path)
    assert pmap == ProjectMap() and problems == [f"{PROJECTS_FILE}: larger than 1 MiB, read as empty"]
    (tmp_path / PROJECTS_FILE).write_bytes(big[:100] + b'"}')
    assert read_map(tmp_path)[0].aliases == {"old": "new"}


def test_only_a_plain_project_line_equal_to_the_old_name_changes() -> None:
    page = "---\ntype: Fact\nproject: acme  \ntitle: 'project: acme'\n---\nproject: acme in the body\n"
    assert with_project(page, "acme", "acme-api") == page.replace("project: acme  \n", "project: acme-api\n", 1)
    assert with_project("# a note\n\nproject: acme\n", "acme", "x") is None  # no frontmatter: not ours to edit
    assert with_project("---\n{project: acme}\n---\nx\n", "acme", "x") is None  # flow style: left alone
    assert with_project("---\nproject: other\n---\nx\n", "acme", "x") is None
    assert with_project("---\nproject: acme\nproject: acme\n---\nx\n", "acme", "x") is None


def test_two_machines_maps_join_ours_winning_chains_followed_cycles_dropped() -> None:
    ours = ProjectMap({"a": "b", "x": "y"}, {"s1": "b"})
    theirs = ProjectMap({"b": "c", "x": "z", "y": "x"}, {"s1": "z", "s2": "b"})
    joined = ours.joined(theirs)
    assert joined.aliases == {"a": "c", "b": "c"}  # x → y → x is a cycle: neither is kept
    assert joined.sessions == {"s1": "c", "s2": "c"}
