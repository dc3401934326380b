"""Item 5: alice's private correction of bob's team page once hid bob's page from everyone and
wrote alice's confidential reason and private id into bob's frontmatter. A correction is visible
to exactly the readers of the new page: another user's page is never hidden nor annotated."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from conftest import Daemon, run_cli

REASON = "confidential: the vendor contract is being renegotiated by legal"


def _user(daemon: Daemon, name: str) -> str:
    done = run_cli(daemon.data_dir, "user", "add", name, "--json", AI_MEMORY_URL=daemon.url)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["token"])


def _call(daemon: Daemon, token: str | None, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    status, answer, _ = daemon.request(method, path, body, headers=headers)
    return status, answer


def _found(daemon: Daemon, token: str | None, path: str) -> bool:
    status, answer = _call(daemon, token, "POST", "/v1/query", {"q": "invoices retried nightly cron", "project": "acme"})
    assert status == 200, answer
    return path in [h["path"] for h in answer["hits"]]


def test_a_private_correction_neither_hides_nor_annotates_a_team_page(daemon: Daemon) -> None:
    alice, bob = _user(daemon, "alice"), _user(daemon, "bob")
    status, team = _call(daemon, bob, "POST", "/v1/pages", {"text": "Invoices are retried by the nightly cron.",
                                                             "kind": "fact", "project": "acme"})
    assert status == 201, team
    before = (daemon.data_dir / "wiki" / team["path"]).read_bytes()
    status, mine = _call(daemon, alice, "POST", "/v1/pages", {
        "text": "Invoices are retried by the hourly cron now.", "kind": "fact", "project": "acme",
        "scope": "private", "supersedes": team["id"], "supersede_reason": REASON})
    assert status == 201, mine

    assert (daemon.data_dir / "wiki" / team["path"]).read_bytes() == before  # not annotated on disk
    for who in (bob, alice, None):  # None: the admin token
        assert _found(daemon, who, team["path"]), who
        status, page = _call(daemon, who, "GET", f"/v1/pages?id={team['id']}")
        assert status == 200 and page["superseded_by"] is None
        assert "superseded_by" not in page["frontmatter"] and "supersede_reason" not in page["frontmatter"]
    for who in (bob, None):
        status, export = _call(daemon, who, "GET", "/v1/export?limit=1000")
        dumped = json.dumps(export)
        assert REASON not in dumped and mine["id"] not in dumped and mine["path"] not in dumped
        status, page = _call(daemon, who, "GET", f"/v1/pages?id={team['id']}")
        assert mine["id"] not in json.dumps(page)
    # alice's own correction is hers to read, with the page it names
    status, page = _call(daemon, alice, "GET", f"/v1/pages?id={mine['id']}")
    assert status == 200 and page["frontmatter"]["supersedes"] == team["id"]
    assert _call(daemon, bob, "GET", f"/v1/pages?id={mine['id']}")[0] == 404
    log = subprocess.run(["git", "-C", str(daemon.data_dir / "wiki"), "log", "-p", "--", team["path"]],
                         capture_output=True, text=True, check=True).stdout
    assert REASON not in log


def test_a_reindex_derives_no_supersession_from_it_either(daemon: Daemon) -> None:
    alice, bob = _user(daemon, "alice"), _user(daemon, "bob")
    team = _call(daemon, bob, "POST", "/v1/pages", {"text": "Invoices are retried by the nightly cron.",
                                                     "kind": "fact", "project": "acme"})[1]
    assert _call(daemon, alice, "POST", "/v1/pages", {
        "text": "Invoices are retried by the hourly cron now.", "kind": "fact", "project": "acme",
        "scope": "private", "supersedes": team["path"]})[0] == 201
    assert daemon.request("POST", "/v1/reindex", {})[0] == 200
    assert _found(daemon, bob, team["path"]) and _found(daemon, None, team["path"])


def test_a_private_correction_of_ones_own_private_page_still_supersedes_it(daemon: Daemon) -> None:
    alice = _user(daemon, "alice")
    old = _call(daemon, alice, "POST", "/v1/pages", {"text": "My invoices are retried by the nightly cron.",
                                                      "kind": "fact", "project": "acme", "scope": "private"})[1]
    new = _call(daemon, alice, "POST", "/v1/pages", {"text": "My invoices are retried hourly.", "kind": "fact",
                                                      "project": "acme", "scope": "private", "supersedes": old["id"]})
    assert new[0] == 201, new
    status, page = _call(daemon, alice, "GET", f"/v1/pages?id={old['id']}")
    assert page["superseded_by"] == new[1]["id"]
    assert not _found(daemon, alice, old["path"])
