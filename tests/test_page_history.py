"""Page history from git: ``history``, ``show --at``, ``restore-page`` and the routes behind them,
against a real daemon and its real wiki repository."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pygit2
import pytest

from conftest import Daemon, run_cli


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("history") / "data").start()
    yield d
    d.stop()


@pytest.fixture(scope="module")
def corrected(daemon: Daemon) -> dict:
    """A fact, then its correction: the old page gains superseded_by, its second version."""
    status, old, _ = daemon.request("POST", "/v1/pages", {"text": "The build cache lives in /var/cache/ci.",
                                                          "kind": "fact", "project": "hist"})
    assert status == 201, old
    status, new, _ = daemon.request("POST", "/v1/pages", {"text": "The build cache lives in /srv/ci-cache.",
                                                          "kind": "fact", "project": "hist", "supersedes": old["id"]})
    assert status == 201, new
    return old


def cli_json(daemon: Daemon, *args: str) -> dict:
    done = run_cli(daemon.data_dir, *args, "--json", AI_MEMORY_PORT=str(daemon.port))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_history_lists_each_commit_that_changed_the_page(daemon: Daemon, corrected: dict) -> None:
    found = cli_json(daemon, "history", corrected["id"])
    assert found["path"] == corrected["path"]
    revisions = found["revisions"]
    assert len(revisions) == 2 and not any(r["removed"] for r in revisions)
    repo = pygit2.Repository(str(daemon.data_dir / "wiki"))
    for rev in revisions:
        commit = repo[rev["commit"]]
        assert rev["message"] == commit.message.strip().splitlines()[0] and "ai-memory" in rev["author"]
    assert revisions[0]["time"] > revisions[1]["time"]
    text = run_cli(daemon.data_dir, "history", corrected["path"], AI_MEMORY_PORT=str(daemon.port))
    assert text.returncode == 0 and revisions[1]["short"] in text.stdout and "2 versions" in text.stdout


def test_show_at_gives_the_old_version_and_restore_writes_it_as_a_new_commit(daemon: Daemon, corrected: dict) -> None:
    first = cli_json(daemon, "history", corrected["path"])["revisions"][-1]
    now = cli_json(daemon, "show", corrected["path"])
    assert now["frontmatter"].get("superseded_by")
    old = cli_json(daemon, "show", corrected["path"], "--at", first["short"])
    assert "superseded_by" not in old["frontmatter"] and old["revision"]["commit"] == first["commit"]
    assert "/var/cache/ci" in old["body"]

    restored = cli_json(daemon, "restore-page", corrected["id"], "--at", first["commit"])
    assert restored["changed"] and restored["restored_from"]["commit"] == first["commit"]
    after = cli_json(daemon, "history", corrected["path"])["revisions"]
    assert len(after) == 3 and after[0]["commit"] == restored["commit"] and after[-1] == first  # never rewritten
    assert "restore" in after[0]["message"]
    wiki_file = (daemon.data_dir / "wiki" / corrected["path"]).read_bytes()
    repo = pygit2.Repository(str(daemon.data_dir / "wiki"))
    assert wiki_file == repo[first["commit"]].tree[corrected["path"]].data
    status, page, _ = daemon.request("GET", f"/v1/pages?path={corrected['path']}")
    assert status == 200 and "superseded_by" not in page["frontmatter"]  # the index followed the file
    assert page["superseded_by"]  # still corrected: the newer page's supersedes says so (invariant 14)
    again = cli_json(daemon, "restore-page", corrected["path"], "--at", first["commit"])
    assert not again["changed"]  # already that version: no empty commit
    check = run_cli(daemon.data_dir, "reindex", "--check")
    assert check.returncode == 0 and "no drift" in check.stdout, check.stdout + check.stderr


@pytest.mark.parametrize("rev", ["main", "HEAD@{1}", "--all", "../x", "a" * 41, "HEAD^"])
def test_a_revision_that_is_not_a_commit_id_is_refused(daemon: Daemon, corrected: dict, rev: str) -> None:
    status, body, _ = daemon.request("GET", f"/v1/pages/at?path={corrected['path']}&rev={rev}")
    assert status == 400 and body["error"] == "not a revision"


def test_paths_outside_the_pages_and_versions_that_did_not_exist(daemon: Daemon, corrected: dict) -> None:
    for path in ("../token", ".git/config", "hist/../../token.md", "/etc/passwd.md", "hist/a%00b.md", "hist%5C..%5Cx.md"):
        status, body, _ = daemon.request("GET", f"/v1/pages/history?path={path}")
        assert status in (400, 404), (path, body)
    status, body, _ = daemon.request("GET", "/v1/pages/at?path=hist/facts/never-there.md&rev=HEAD")
    assert status == 404
    status, body, _ = daemon.request("GET", f"/v1/pages/at?path={corrected['path']}&rev=HEAD~100000")
    assert status == 404


def test_another_users_private_page_has_no_history_for_me(daemon: Daemon) -> None:
    status, users, _ = daemon.request("POST", "/v1/users", {"name": "ana"})
    assert status == 201, users
    status, mine, _ = daemon.request("POST", "/v1/pages", {"text": "my private draft of the plan",
                                                           "kind": "fact", "project": "hist", "scope": "private",
                                                           "owner": "bob"})
    assert status == 201, mine
    as_ana = {"Authorization": f"Bearer {users['token']}"}
    for path in (f"/v1/pages/history?path={mine['path']}", f"/v1/pages/at?id={mine['id']}&rev=HEAD"):
        status, body, _ = daemon.request("GET", path, headers=as_ana)
        assert status == 404, body
    status, body, _ = daemon.request("POST", "/v1/pages/restore", {"id": mine["id"], "rev": "HEAD"}, headers=as_ana)
    assert status == 404, body


def test_a_symlink_in_history_is_no_page_version(daemon: Daemon) -> None:
    """A commit made outside ai-memory that put a link at a page path: nothing to show or restore."""
    wiki = daemon.data_dir / "wiki"
    repo = pygit2.Repository(str(wiki))
    builder = repo.TreeBuilder(repo[repo.head.target].tree)
    sub = repo.TreeBuilder()
    sub.insert("link.md", repo.create_blob(b"/etc/passwd"), pygit2.GIT_FILEMODE_LINK)
    builder.insert("linked", sub.write(), pygit2.GIT_FILEMODE_TREE)
    sig = pygit2.Signature("someone", "someone@example.com")
    oid = repo.create_commit("HEAD", sig, sig, "a link", builder.write(), [repo.head.target])
    status, body, _ = daemon.request("GET", f"/v1/pages/at?path=linked/link.md&rev={str(oid)[:12]}")
    assert status == 404, body
    status, body, _ = daemon.request("POST", "/v1/pages/restore", {"path": "linked/link.md", "rev": "HEAD"})
    assert status == 404 and not (wiki / "linked" / "link.md").exists(), body


def test_a_deleted_private_page_leaves_no_history_for_others(daemon: Daemon) -> None:
    """Once alice deletes her private page, the index no longer knows it is private: its
    versions say so, and bob is shown none of them (not its commits, times or messages)."""
    tokens = {}
    for name in ("alice2", "bob2"):
        status, body, _ = daemon.request("POST", "/v1/users", {"name": name})
        assert status == 201, body
        tokens[name] = {"Authorization": f"Bearer {body['token']}"}
    status, page, _ = daemon.request("POST", "/v1/pages", {"text": "Salary bands for the new hires",
                                                           "kind": "fact", "project": "hist", "scope": "private"},
                                     headers=tokens["alice2"])
    assert status == 201, page
    status, _, _ = daemon.request("DELETE", f"/v1/pages?path={page['path']}", headers=tokens["alice2"])
    assert status == 200
    status, body, _ = daemon.request("GET", f"/v1/pages/history?path={page['path']}", headers=tokens["bob2"])
    assert status == 404, body
    status, body, _ = daemon.request("GET", f"/v1/pages/history?path={page['path']}", headers=tokens["alice2"])
    assert status == 200 and len(body["revisions"]) == 2, body  # written, then removed


def test_history_walks_stop_at_wiki_history_depth(data_dir) -> None:
    """A request reads at most wiki.history_depth commits back from HEAD, however long the history."""
    d = Daemon(data_dir, env={"AI_MEMORY_WIKI_HISTORY_DEPTH": "20"}).start()
    try:
        status, old, _ = d.request("POST", "/v1/pages", {"text": "The nightly job starts at 02:00.", "kind": "fact",
                                                         "project": "deep"})
        assert status == 201, old
        status, found, _ = d.request("GET", f"/v1/pages/history?path={old['path']}")
        assert status == 200 and len(found["revisions"]) == 1, found
        first = found["revisions"][0]["commit"]
        repo = pygit2.Repository(str(d.data_dir / "wiki"))
        sig = pygit2.Signature("someone", "someone@example.com")
        for i in range(25):  # commits that change nothing of that page push it 25 deep
            tree = repo[repo.head.target].tree
            repo.create_commit("HEAD", sig, sig, f"elsewhere {i}", tree.id, [repo.head.target])
        status, body, _ = d.request("GET", f"/v1/pages/history?path={old['path']}")
        assert status == 404 and "wiki.history_depth" in body["detail"], body
        for rev in (first, first[:10], "HEAD~25"):
            status, body, _ = d.request("GET", f"/v1/pages/at?path={old['path']}&rev={rev}")
            assert status == 404 and "wiki.history_depth" in body["detail"], (rev, body)
        status, body, _ = d.request("GET", f"/v1/pages/at?path={old['path']}&rev=HEAD~19")
        assert status == 200 and "02:00" in body["body"], body  # within the depth: read as ever
    finally:
        d.stop()
