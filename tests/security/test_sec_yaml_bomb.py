"""Item 8: a YAML alias bomb in a page's frontmatter (340 bytes that expand to 28 MB) is a broken
page, not 28 MB of frontmatter JSON in the index; so is frontmatter over 64 KB."""

from __future__ import annotations

from pathlib import Path

from conftest import Daemon
from wiki_helpers import wait_until

LEVELS = "abcdefg"
BOMB = "---\ntype: Note\ntitle: laughs\n" + "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip(LEVELS, LEVELS[1:])) + "---\nha\n"


def _db_bytes(data_dir: Path) -> int:
    db = data_dir / "db"
    return sum(p.stat().st_size for p in db.glob("memory.sqlite*"))


def _broken(daemon: Daemon) -> dict[str, str]:
    status = daemon.request("GET", "/status")[1]
    return {b["path"]: "; ".join(b["problems"]) for b in status["wiki"]["broken_pages"]}


def test_an_alias_bomb_is_a_broken_page(daemon: Daemon) -> None:
    assert len(BOMB) < 600
    before = _db_bytes(daemon.data_dir)
    page = daemon.data_dir / "wiki" / "acme" / "notes" / "laughs.md"
    page.parent.mkdir(parents=True)
    page.write_text(BOMB)
    wait_until(lambda: "acme/notes/laughs.md" in _broken(daemon), timeout=60)
    assert "aliases" in _broken(daemon)["acme/notes/laughs.md"]
    status, body, _ = daemon.request("GET", "/v1/pages?path=acme/notes/laughs.md")
    assert status == 200 and body["frontmatter"] == {}
    assert _db_bytes(daemon.data_dir) - before < 2 * 1024 * 1024
    assert daemon.post_hook({"session_id": "after", "hook_event_name": "Stop"})[0] == 202


def test_frontmatter_over_64_kb_is_not_read(daemon: Daemon) -> None:
    tags = "".join(f"  - tag-{i:06d}\n" for i in range(7000))
    page = daemon.data_dir / "wiki" / "acme" / "notes" / "huge.md"
    page.parent.mkdir(parents=True)
    page.write_text(f"---\ntype: Note\ntags:\n{tags}---\nbody\n")
    wait_until(lambda: "acme/notes/huge.md" in _broken(daemon), timeout=60)
    assert "larger than 65536 bytes" in _broken(daemon)["acme/notes/huge.md"]
