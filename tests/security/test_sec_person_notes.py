"""Issue 39, item 5: a teammate cannot rewrite or hide a person's note. A page ai-memory did not
write (no ``id`` of its own) is never re-rendered: correcting or pinning it adds (or removes)
exactly one line, or is refused with the reason; superseding another user's page needs that
user or the admin."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Daemon
from wiki_helpers import wait_until

NOTE = "journal/offsite.md"
# A person's note as people write them: a comment, quoting, flow style, a date YAML would re-type.
NOTE_TEXT = ("---\n# planning notes, keep private-ish\ntitle: 'Offsite: Lisbon'\ntags: [travel, team]\n"
             "date: 2026-03-02\nproject: acme-api\n---\n# Offsite\n\nWe meet in Lisbon in March; budget is tight.\n")
PLAIN = "journal/plain.md"
PLAIN_TEXT = "# Plain note\n\nNo frontmatter at all, and the offsite budget is tight.\n"


def as_user(daemon: Daemon, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    status, answer, _ = daemon.request(method, path, body, headers={"Authorization": f"Bearer {token}"})
    return status, answer


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Daemon, str, str]]:
    daemon = Daemon(tmp_path / "data").start()
    wiki = daemon.data_dir / "wiki"
    for rel, text in ((NOTE, NOTE_TEXT), (PLAIN, PLAIN_TEXT)):
        (wiki / rel).parent.mkdir(parents=True, exist_ok=True)
        (wiki / rel).write_text(text)
    tokens = []
    for name in ("alice", "bob"):
        status, body, _ = daemon.request("POST", "/v1/users", {"name": name})
        assert status == 201, body
        tokens.append(body["token"])
    wait_until(lambda: _indexed(daemon, NOTE) and _indexed(daemon, PLAIN), timeout=20)
    yield daemon, tokens[0], tokens[1]
    daemon.stop()


def _indexed(daemon: Daemon, rel: str) -> bool:
    return daemon.request("GET", f"/v1/pages?path={rel}")[0] == 200


def _found(daemon: Daemon, token: str, q: str) -> list[str]:
    status, body = as_user(daemon, token, "POST", "/v1/query", {"q": q, "project": "acme-api"})
    assert status == 200, body
    return [h["path"] for h in body["hits"]]


def correction(supersedes: str) -> dict[str, Any]:
    return {"text": "The offsite moved to Porto.", "kind": "fact", "project": "acme-api", "supersedes": supersedes}


def test_a_teammate_cannot_supersede_a_persons_note(team: tuple[Daemon, str, str]) -> None:
    daemon, _, bob = team
    status, body = as_user(daemon, bob, "POST", "/v1/pages", correction(NOTE))
    assert status == 403 and "author" in body["error"], body
    assert (daemon.data_dir / "wiki" / NOTE).read_text() == NOTE_TEXT
    assert NOTE in _found(daemon, bob, "offsite Lisbon budget")


def test_a_teammate_cannot_supersede_another_users_page(team: tuple[Daemon, str, str]) -> None:
    daemon, alice, bob = team
    status, page = as_user(daemon, alice, "POST", "/v1/pages",
                           {"text": "Deploy freezes start on Fridays.", "kind": "decision", "project": "acme-api"})
    assert status == 201, page
    status, body = as_user(daemon, bob, "POST", "/v1/pages", {**correction(page["path"]), "kind": "decision"})
    assert status == 403, body
    status, body = as_user(daemon, alice, "POST", "/v1/pages", {**correction(page["path"]), "kind": "decision"})
    assert status == 201, body  # the author may
    status, body = as_user(daemon, bob, "POST", "/v1/pages",
                           {**correction(body["path"]), "kind": "decision", "scope": "private"})
    assert status == 201, body  # a private correction is bob's own note: it hides nothing from others


def test_the_admin_corrects_a_persons_note_by_one_added_line(team: tuple[Daemon, str, str]) -> None:
    daemon, _, _ = team
    status, body, _ = daemon.request("POST", "/v1/pages", correction(NOTE))
    assert status == 201, body
    after = (daemon.data_dir / "wiki" / NOTE).read_text()
    added = [line for line in after.splitlines() if line not in NOTE_TEXT.splitlines()]
    assert added == [f"superseded_by: {body['id']}"]
    assert after.replace(f"superseded_by: {body['id']}\n", "") == NOTE_TEXT
    status, body, _ = daemon.request("POST", "/v1/pages", {**correction(PLAIN), "text": "Budget is fine now."})
    assert status == 201, body  # no frontmatter: the correction alone says what it supersedes
    assert (daemon.data_dir / "wiki" / PLAIN).read_text() == PLAIN_TEXT


@pytest.mark.parametrize("route", ["/v1/pages/pin", "/ui/pin"])
def test_pinning_a_persons_note_adds_one_line_and_unpinning_gives_it_back(team: tuple[Daemon, str, str],
                                                                          route: str) -> None:
    daemon, _, bob = team
    note = daemon.data_dir / "wiki" / NOTE
    status, body = pin(daemon, bob, route, NOTE, True)
    assert status == 200, body
    assert note.read_text() == NOTE_TEXT.replace("project: acme-api\n", "project: acme-api\npinned: true\n")
    status, body = pin(daemon, bob, route, NOTE, False)
    assert status == 200, body
    assert note.read_text() == NOTE_TEXT
    status, body = pin(daemon, bob, route, PLAIN, True)
    assert status == 409, body
    assert (daemon.data_dir / "wiki" / PLAIN).read_text() == PLAIN_TEXT


def pin(daemon: Daemon, token: str, route: str, path: str, pinned: bool) -> tuple[int, Any]:
    if route == "/v1/pages/pin":
        return as_user(daemon, token, "POST", route, {"path": path, "pinned": pinned})
    from ui_helpers import Browser

    browser = Browser(daemon).login(token)
    form = {"path": path, "pinned": "true" if pinned else "false", "csrf": browser.csrf()}
    status, text, _ = browser.request("POST", route, form)
    return (200 if status == 303 else status), text


def test_git_history_holds_each_version(team: tuple[Daemon, str, str]) -> None:
    daemon, _, _ = team
    assert daemon.request("POST", "/v1/pages/pin", {"path": NOTE})[0] == 200
    log = subprocess.run(["git", "-C", str(daemon.data_dir / "wiki"), "log", "--format=%s", "--", NOTE],
                         capture_output=True, text=True, check=True).stdout
    assert log.splitlines()[0].startswith("pin journal/offsite.md")
