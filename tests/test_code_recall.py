"""What coding agents ask memory: where an error occurred and was fixed, and why we decided
something. End to end: real hook payloads into a real daemon with the real model."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Daemon
from wiki_helpers import wait_until

CWD = "/home/dev/urlkit"


def post_session(d: Daemon, sid: str, prompt: str, tools: list[dict[str, Any]], reply: str) -> None:
    base = {"session_id": sid, "cwd": CWD}
    d.post_hook({**base, "hook_event_name": "SessionStart", "source": "startup"})
    d.post_hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    for i, tool in enumerate(tools):
        d.post_hook({**base, "hook_event_name": "PostToolUse", "tool_use_id": f"{sid}-{i}", **tool})
    d.post_hook({**base, "hook_event_name": "Stop", "last_assistant_message": reply})
    d.post_hook({**base, "hook_event_name": "SessionEnd", "reason": "exit"})


def bash(command: str, stdout: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command},
            "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False}}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_name": "Edit", "tool_input": {"file_path": f"{CWD}/{path}", "old_string": old, "new_string": new},
            "tool_response": {"filePath": f"{CWD}/{path}", "success": True}}


TRACEBACK = """tests/test_url.py::test_port_text FAILED
Traceback (most recent call last):
  File "urlkit/_url.py", line 412, in port
    return int(self._port)
ValueError: Port could not be cast to integer value as 'abc'
1 failed, 211 passed in 3.20s"""


@pytest.fixture(scope="module")
def memory(tmp_path_factory) -> Daemon:
    d = Daemon(tmp_path_factory.mktemp("recall") / "data", env={"AI_MEMORY_EMBED_ENABLED": "1"}).start(timeout=60)
    post_session(d, "err-fixed", "The parser crashes on some URLs in the test run",
                 [bash("pytest -q", TRACEBACK),
                  edit("urlkit/_url.py", "        return int(self._port)",
                       "        if not self._port.isdigit():\n            raise ValueError(f\"invalid port {self._port!r}\")\n"
                       "        return int(self._port)")],
                 "The port is now validated before it is cast, with a clear message.")
    post_session(d, "err-other", "Tests fail after the refactor",
                 [bash("pytest -q", "Traceback (most recent call last):\n  File \"urlkit/_query.py\", line 88, in parse\n"
                                    "KeyError: 'scheme'\n1 failed"),
                  edit("urlkit/_query.py", "scheme = parts['scheme']", "scheme = parts.get('scheme', '')")],
                 "The query parser no longer assumes a scheme.")
    post_session(d, "port-default", "Use the scheme's default port when the URL has none",
                 [edit("urlkit/_url.py", "        return self._port", "        return self._port or DEFAULT_PORTS[self.scheme]")],
                 "Ports now default by scheme: 80 for http, 443 for https.")
    post_session(d, "locks-talk", "Should the job queue lock with Redis or with Postgres?",
                 [], "We chose Postgres advisory locks because Redis would be one more service to run, and a lost"
                     " lock there would run a job twice.")
    post_session(d, "locks-code", "Add a Redis lock helper for the cache warmer",
                 [edit("urlkit/cache.py", "", "def redis_lock(name):\n    return client.lock(name, timeout=30)")],
                 "The cache warmer takes a Redis lock now.")
    # Two sessions over the same lines, one putting them in, the other taking them out.
    proxy = "TIMEOUT = 30\nLEGACY_PROXY = os.environ.get('URLKIT_PROXY')"
    post_session(d, "proxy-in", "Change the proxy settings", [edit("urlkit/config.py", "TIMEOUT = 30", proxy)], "Done.")
    post_session(d, "proxy-out", "Update the proxy settings", [edit("urlkit/config.py", proxy, "TIMEOUT = 30")], "Done.")
    # A version written inside a name (a tag) against one written plainly beside the word asked.
    post_session(d, "tagged", "Ship it", [bash("git tag -a v2.4.0 -m 'ship' && git push --tags", "")], "Pushed.")
    post_session(d, "notes", "Write the changelog", [edit("CHANGES.rst", "", "2.3.0\n=====\n- Ports default by scheme")],
                 "The changelog is written.")
    status, _, _ = d.request("POST", "/v1/pages", {
        "kind": "decision", "project": "urlkit", "title": "Job queue locks use Postgres advisory locks",
        "text": "The job queue locks with Postgres advisory locks, not Redis: one service fewer to run, and a lock"
                " lost with Redis would run a job twice."})
    assert status == 201

    def settled() -> bool:
        status = d.request("GET", "/status")[1]
        backlog = status["embeddings"]["backlog"]
        return status["wiki"]["sessions_compiled"] >= 9 and backlog == {"chunks": 0, "observations": 0}

    wait_until(settled, timeout=120, step=0.3)
    yield d
    d.stop()


def ask(d: Daemon, q: str) -> list[dict[str, Any]]:
    status, body, _ = d.request("POST", "/v1/query", {"q": q, "project": "urlkit"})
    assert status == 200, body
    return body["hits"]


def test_an_error_message_finds_the_session_where_it_occurred_and_was_fixed(memory: Daemon) -> None:
    hits = ask(memory, "ValueError: Port could not be cast to integer value")
    assert hits[0]["session_id"] == "err-fixed", [(h["session_id"], h["score"]) for h in hits]


def test_a_traceback_line_finds_the_session_too(memory: Daemon) -> None:
    hits = ask(memory, 'File "urlkit/_url.py", line 412, in port')
    assert hits[0]["session_id"] == "err-fixed", [(h["session_id"], h["score"]) for h in hits]


def test_what_did_we_decide_prefers_the_decision_page(memory: Daemon) -> None:
    hits = ask(memory, "What did we decide about locking the job queue?")
    assert hits[0]["type"] == "Decision", [(h["path"], h["score"]) for h in hits]


def test_why_did_we_finds_the_reply_that_gave_the_reason(memory: Daemon) -> None:
    hits = ask(memory, "Why did we pick Postgres over Redis for the job queue locks?")
    order = [h["session_id"] or h["type"] for h in hits]
    assert order[0] == "Decision", order
    talk = next(h for h in hits if h["session_id"] == "locks-talk")
    assert "because" in talk["evidence"][0]["snippet"], talk["evidence"]
    assert order.index("locks-talk") < order.index("locks-code"), order


def test_where_did_we_remove_it_finds_the_edit_that_took_it_out(memory: Daemon) -> None:
    """Both sessions hold the same lines; which one took them out, and which put them in, is
    what tells them apart."""
    removed = [h["session_id"] for h in ask(memory, "Where did we remove LEGACY_PROXY?")]
    added = [h["session_id"] for h in ask(memory, "When did we add LEGACY_PROXY to the config?")]
    assert removed.index("proxy-out") < removed.index("proxy-in"), removed
    assert added.index("proxy-in") < added.index("proxy-out"), added


def test_a_version_finds_the_tag_that_holds_it(memory: Daemon) -> None:
    hits = [h["session_id"] for h in ask(memory, "When did we release 2.4.0?")]
    assert hits[0] == "tagged", hits
