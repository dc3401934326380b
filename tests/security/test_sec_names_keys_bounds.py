"""Items 12, 13, 14 and 17: idempotency keys are opaque (hashed, never cut), names match whole
(``$`` let ``"acme\\n"`` through), a hook's key is its owner's alone, and every list a request
may carry is bounded."""

from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import Daemon, run_cli


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
