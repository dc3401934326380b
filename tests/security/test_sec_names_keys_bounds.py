"""Items 12, 13, 14 and 17: idempotency keys are opaque (hashed, never cut), names match whole
(``$`` let ``"acme\\n"`` through), a hook's key is its owner's alone, and every list a request
may carry is bounded."""

from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import Daemon, run_cli
from wiki_helpers import wait_until


def _user(daemon: Daemon, name: str) -> str:
    done = run_cli(daemon.data_dir, "user", "add", name, "--json", AI_MEMORY_URL=daemon.url)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["token"])


def test_two_long_keys_sharing_their_first_80_characters_are_two_writes(daemon: Daemon) -> None:
    shared = "client-7f3a-" + "x" * 80
    paths = []
    for n, tail in enumerate(("-first", "-second")):
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": f"Write number {n} of the outbox.",
                                                                "kind": "fact", "project": "acme",
                                                                "idempotency_key": shared + tail})
        assert status == 201 and body["created"], body
        paths.append(body["path"])
    again = daemon.request("POST", "/v1/pages", {"text": "Write number 1 of the outbox.", "kind": "fact",
                                                  "project": "acme", "idempotency_key": shared + "-second"})[1]
    assert again["created"] is False and again["path"] == paths[1]
    text = (daemon.data_dir / "wiki" / paths[1]).read_text()
    assert shared not in text and "idempotency_key: sha256:" in text  # stored as its hash, never cut


def test_a_key_that_looks_like_a_secret_is_not_redacted_into_a_collision(daemon: Daemon) -> None:
    keys = ["password=hunter2-attempt-1", "password=hunter2-attempt-2"]
    created = [daemon.request("POST", "/v1/pages", {"text": f"Secretless fact {i}.", "kind": "fact",
                                                     "project": "acme", "idempotency_key": k})[1]["created"]
               for i, k in enumerate(keys)]
    assert created == [True, True]


def test_names_with_a_trailing_newline_are_refused(daemon: Daemon, tmp_path: Path) -> None:
    for path, body in (
        ("/v1/pages", {"text": "x", "kind": "fact", "project": "acme\n"}),
        ("/v1/messages", {"to_project": "acme\n", "body": "hi"}),
        ("/v1/messages/pop", {"project": "acme\n"}),
        ("/v1/handoffs", {"summary": "half", "project": "acme\n"}),
        ("/v1/users", {"name": "carol\n"}),
        ("/v1/query", {"q": "x", "owner": "alice\n"}),
        ("/hook/envelope", {"agent": "claude", "idempotency_key": "k\n",
                            "payload": {"session_id": "s", "hook_event_name": "Stop"}}),
        ("/hook/envelope", {"agent": "claude\n", "payload": {"session_id": "s", "hook_event_name": "Stop"}}),
    ):
        status, reply, _ = daemon.request("POST", path, body)
        assert status == 400, (path, reply)
    status, _, _ = daemon.request("POST", "/hook?agent=claude%0A", {"session_id": "s", "hook_event_name": "Stop"})
    assert status == 400
    assert not [p for p in (daemon.data_dir / "wiki").iterdir() if "\n" in p.name]
    done = run_cli(daemon.data_dir, "user", "add", "dave\n", AI_MEMORY_URL=daemon.url)
    assert done.returncode != 0


def test_hook_keys_are_scoped_by_owner(daemon: Daemon) -> None:
    alice, bob = _user(daemon, "alice"), _user(daemon, "bob")
    event = {"hook_event_name": "UserPromptSubmit", "prompt": "deploy the api"}
    for token, session in ((bob, "bob-1"), (alice, "alice-1")):
        status, body, _ = daemon.request("POST", "/hook?agent=claude", {**event, "session_id": session},
                                         headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "K-1"})
        assert status == 202 and body["duplicate"] is False, body
    status, body, _ = daemon.request("POST", "/hook?agent=claude", {**event, "session_id": "alice-2"},
                                     headers={"Authorization": f"Bearer {alice}", "Idempotency-Key": "K-1"})
    assert status == 200 and body["duplicate"] is True
    for session in ("bob-1", "alice-1"):
        assert len(daemon.request("GET", f"/v1/sessions/{session}/observations")[1]["observations"]) == 1
    assert daemon.request("POST", "/v1/reindex", {})[0] == 200
    done = run_cli(daemon.data_dir, "reindex", "--check", "--url", daemon.url)
    assert done.returncode == 0, done.stdout
    assert len(daemon.request("GET", "/v1/sessions/alice-1/observations")[1]["observations"]) == 1


def test_every_list_a_request_carries_is_bounded(daemon: Daemon) -> None:
    many = [f"p{i}" for i in range(100_000)]
    for path, body in (
        ("/v1/query", {"q": "x", "projects": many}),
        ("/v1/query", {"q": "x", "kind": many}),
        ("/v1/query", {"q": "x " * 50_000}),
        ("/v1/pages", {"text": "x", "kind": "fact", "project": "acme", "tags": many}),
        ("/v1/pages", {"text": "x", "kind": "fact", "project": "acme", "entities": many}),
        ("/v1/handoffs", {"summary": "half", "project": "acme", "next_steps": many}),
        ("/hook/batch?agent=claude", [{"session_id": "s", "hook_event_name": "Stop"}] * 1000),
    ):
        started = time.monotonic()
        status, reply, _ = daemon.request("POST", path, body)
        assert 400 <= status < 500 and reply["error"], (path, reply)
        assert time.monotonic() - started < 5, path


def test_a_project_named_like_a_page_gets_a_folder_of_its_own(daemon: Daemon) -> None:
    """Issue 39, item 9: a checkout named ``todo.md`` (or ``README.md``, a collision on a
    case-insensitive disk) names a project whose folder could never be made beside the page."""
    wiki = daemon.data_dir / "wiki"
    (wiki / "todo.md").write_text("# My todo list\n\n- water the plants\n")
    for event in ("UserPromptSubmit", "SessionEnd"):
        status, body = daemon.post_hook({"session_id": "todo-1", "hook_event_name": event, "cwd": "/home/dev/todo.md",
                                         "prompt": "Sort the todo list"})
        assert status == 202, body
    wait_until(lambda: list((wiki / "todo-md" / "sessions").glob("*.md")) if (wiki / "todo-md").exists() else [],
               timeout=20)
    assert (wiki / "todo.md").read_text() == "# My todo list\n\n- water the plants\n"


def test_a_session_that_cannot_compile_is_retried_a_few_times_in_one_line_each(tmp_path: Path) -> None:
    """A session whose page cannot be written (a file where its project's folder must go) is
    tried again after 1, 2, 4 and 8 idle passes, then left: one line each time, no traceback."""
    data = tmp_path / "data"
    daemon = Daemon(data, env={"AI_MEMORY_SESSIONS_IDLE_MINUTES": "0",
                               "AI_MEMORY_WIKI_RECONCILE_INTERVAL_S": "0.2"}).start()
    try:
        (data / "wiki" / "blocked").write_text("a file where the project's folder would go\n")
        for event in ("UserPromptSubmit", "Stop"):
            status, body = daemon.post_hook({"session_id": "stuck-1", "hook_event_name": event,
                                             "cwd": "/home/dev/blocked", "prompt": "Try it"})
            assert status == 202, body
        log = data.parent / f"daemon-{daemon.port}.log"
        wait_until(lambda: "could not be compiled 5 times" in log.read_text(), timeout=30)
        text = log.read_text()
        assert "Traceback" not in text
        assert sum("stuck-1" in line for line in text.splitlines() if "compile" in line) == 5
    finally:
        daemon.stop()


def test_a_teammates_paths_are_never_looked_up_on_the_servers_disk(daemon: Daemon, tmp_path: Path) -> None:
    """Issue 39, item 13: on a team server a client's ``cwd`` is text, not a path here: naming a
    checkout on the server must not reveal its git remote as the project (nor resolve its links)."""
    from ai_memory.client.hook_drain import with_project

    checkout = tmp_path / "server-side" / "main"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:secret-org/internal-tool.git\n')
    status, user, _ = daemon.request("POST", "/v1/users", {"name": "teammate"})
    assert status == 201, user
    as_teammate = {"Authorization": f"Bearer {user['token']}"}
    for session, extra in (("probe-1", {}), ("probe-2", {"project": "their-api"})):
        status, body, _ = daemon.request("POST", "/hook?agent=claude", {
            "session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": str(checkout), "prompt": "hi",
            **extra}, headers=as_teammate)
        assert status == 202, body
    import sqlite3

    with sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite") as conn:
        got = dict(conn.execute("SELECT session_id, project FROM observations WHERE session_id LIKE 'probe-%'"))
    assert got == {"probe-1": "main", "probe-2": "their-api"}  # the name as text; the client's own project
    status, brief, _ = daemon.request("POST", "/v1/briefing", {"session_id": "probe-3", "cwd": str(checkout)},
                                      headers=as_teammate)
    assert status == 200 and brief["project"] == "main", brief
    # the admin's own hooks on this machine still read the checkout's identity
    status, _ = daemon.post_hook({"session_id": "local-1", "hook_event_name": "UserPromptSubmit",
                                  "cwd": str(checkout), "prompt": "hi"})
    with sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite") as conn:
        assert conn.execute("SELECT project FROM observations WHERE session_id = 'local-1'").fetchone() == (
            "secret-org-internal-tool",)
    # a client on another machine names the project itself before it sends an event
    envelope = with_project({"agent": "claude", "payload": {"session_id": "x", "cwd": str(checkout)}})
    assert envelope["payload"]["project"] == "secret-org-internal-tool"
