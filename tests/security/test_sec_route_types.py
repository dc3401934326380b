"""Item 11: every field of every JSON route is type-checked into a 400 (``{"kind": ["fact"]}`` on
/v1/pages was a 500: unhashable). Property test: each route gets bodies whose known fields hold
any JSON value; no answer is a 5xx, and every 4xx carries a reason."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Daemon

PAYLOAD_FIELDS = ["session_id", "hook_event_name", "prompt", "timestamp", "cwd", "tool_name", "tool_input",
                  "tool_response", "idempotency_key", "event", "project", "host", "hostname", "source", "message",
                  "error", "workspace_roots", "prompt_id", "last_assistant_message", "reason", "trigger"]
ROUTES: dict[str, list[str]] = {
    "/hook?agent=claude": PAYLOAD_FIELDS,
    "/hook/envelope": ["agent", "event", "idempotency_key", "host", "os", "captured_at", "payload"],
    "/v1/briefing?agent=claude": ["cwd", "session_id", "agent"],
    "/v1/handoffs": ["summary", "cwd", "project", "next_steps", "open_questions", "files_touched", "from_agent",
                     "to_agent", "model", "shared", "session_id", "owner", "idempotency_key"],
    "/v1/handoffs/accept": ["cwd", "agent", "session_id", "project", "owner"],
    "/v1/messages": ["to_project", "body", "from_project", "from_agent", "ttl_s", "owner", "idempotency_key"],
    "/v1/messages/pop": ["project", "limit", "session_id", "owner"],
    "/v1/query": ["q", "project", "projects", "all", "k", "explain", "as_of", "include_superseded", "kind", "scope",
                  "min_score", "owner"],
    "/v1/pages": ["text", "kind", "project", "scope", "title", "tags", "entities", "source", "expires_at",
                  "supersedes", "supersede_reason", "idempotency_key", "owner"],
    "/v1/feedback": ["path", "id", "signal", "owner"],
    "/v1/forget-sweep": ["dry_run"],
    "/v1/users": ["name"],
    "/v1/pages/restore": ["path", "id", "rev", "owner"],
}
VALID = {"text": "a fact", "kind": "fact", "project": "acme", "q": "fact", "summary": "half done", "cwd": "/tmp",
         "session_id": "s1", "to_project": "acme", "body": "hi", "signal": "helpful", "hook_event_name": "Stop",
         "name": "carol", "dry_run": True, "payload": {"session_id": "s1", "hook_event_name": "Stop"}}
scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=False)
           | st.text(max_size=40) | st.sampled_from(["fact", "private", "open", "", "2025-01-01", "acme\n", "-x"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=4), max_leaves=12)


def _body(fields: list[str]) -> st.SearchStrategy[dict]:
    def build(chosen: dict, valid: list[str]) -> dict:
        return {**{k: VALID[k] for k in valid if k in VALID}, **chosen}
    return st.builds(build, st.dictionaries(st.sampled_from(fields), values, max_size=len(fields)),
                     st.lists(st.sampled_from(fields), max_size=len(fields)))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("types") / "data").start()
    yield d
    d.stop()


def _check(daemon: Daemon, path: str, body: object) -> None:
    status, reply, _ = daemon.request("POST", path, raw=json.dumps(body).encode(),
                                      headers={"Content-Type": "application/json"})
    assert status < 500, (path, body, status, reply)
    if status >= 400:
        assert isinstance(reply, dict) and reply.get("error"), (path, body, reply)


@pytest.mark.parametrize("path", sorted(ROUTES))
def test_any_field_of_any_type_gets_a_4xx_never_a_5xx(shared: Daemon, path: str) -> None:
    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(body=_body(ROUTES[path]))
    def run(body: dict) -> None:
        _check(shared, path, body)

    run()


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(items=st.lists(_body(PAYLOAD_FIELDS) | _body(ROUTES["/hook/envelope"]) | values, max_size=4))
def test_batches_of_anything_never_get_a_5xx(shared: Daemon, items: list) -> None:
    _check(shared, "/hook/batch?agent=claude", items)
    for result in (shared.request("POST", "/hook/batch?agent=claude", items)[1] or {}).get("results", []):
        assert result["status"] < 500, result


@pytest.mark.parametrize("remote", [["x"], {"a": 1}, 3, True, "-x", "ext::sh", ""])
def test_sync_remote_of_any_type_gets_a_400(shared: Daemon, remote: object) -> None:
    status, reply, _ = shared.request("POST", "/v1/sync", {"remote": remote})
    assert status == 400 and reply["error"], reply


def test_the_reported_case(shared: Daemon) -> None:
    for field, value in (("kind", ["fact"]), ("scope", ["private"]), ("kind", {"a": 1})):
        status, reply, _ = shared.request("POST", "/v1/pages", {"text": "x", "kind": "fact", "project": "acme",
                                                                 field: value})
        assert status == 400 and field in reply["error"], reply
