"""Malformed, truncated, oversized, non-UTF-8 and deeply nested bodies get a 4xx with a reason."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Daemon

import pytest


@pytest.fixture(scope="module")
def shared_daemon(tmp_path_factory) -> Daemon:
    d = Daemon(tmp_path_factory.mktemp("fuzz") / "data").start()
    yield d
    d.stop()


def _post_raw(d: Daemon, raw: bytes, ctype: str | None = "application/json") -> tuple[int, object]:
    headers = {"Content-Type": ctype} if ctype else {}
    status, body, _ = d.request("POST", "/hook?agent=claude", raw=raw, headers=headers)
    return status, body


def _assert_4xx_with_reason(status: int, body: object) -> None:
    assert 400 <= status < 500, (status, body)
    assert isinstance(body, dict) and body.get("error"), body


@pytest.mark.parametrize("raw", [
    b"", b"{", b'{"session_id": "x", "hook_event_name":', b"[1, 2", b"null", b"42", b'"text"',
    b"\xff\xfe{}", b'{"session_id": "\xc3\x28"}', b"[" * 100000 + b"]" * 100000,
    b'{"a": NaN, "session_id": "x", "hook_event_name": "Stop"}',
    b'{"hook_event_name": "Stop"}', b'{"session_id": "x"}',
])
def test_known_bad_bodies(shared_daemon: Daemon, raw: bytes) -> None:
    _assert_4xx_with_reason(*_post_raw(shared_daemon, raw))


def test_not_json_content_type_is_415(shared_daemon: Daemon) -> None:
    status, body = _post_raw(shared_daemon, b"session_id=x", "application/x-www-form-urlencoded")
    assert status == 415 and body["error"] == "body must be JSON"


def test_oversized_body_is_413(shared_daemon: Daemon) -> None:
    big = json.dumps({"session_id": "x", "hook_event_name": "Stop", "p": "a" * (11 * 1024 * 1024)}).encode()
    status, body = _post_raw(shared_daemon, big)
    assert status == 413 and body["error"]


def test_deeply_nested_valid_payload_is_stored_bounded(shared_daemon: Daemon) -> None:
    nested: object = "leaf"
    for _ in range(500):
        nested = {"n": nested}
    status, _ = shared_daemon.post_hook({"session_id": "deep", "hook_event_name": "Stop", "deep": nested})
    assert status == 202


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    body=st.one_of(
        st.binary(max_size=300),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.dictionaries(st.sampled_from(["session_id", "hook_event_name", "prompt", "timestamp", "cwd",
                                         "tool_input", "idempotency_key", "event"]),
                        json_values, max_size=8).map(lambda v: json.dumps(v).encode()),
        json_values.map(lambda v: json.dumps(v).encode()[:-1]),  # truncated
    )
)
def test_generated_bodies_never_get_5xx(shared_daemon: Daemon, body: bytes) -> None:
    status, reply = _post_raw(shared_daemon, body)
    assert status < 500, (status, reply)
    if status >= 400:
        _assert_4xx_with_reason(status, reply)
    else:
        assert status in (200, 202) and reply["id"]


def test_each_error_status_reads_back_as_its_class_or_a_parent() -> None:
    """The server answers with ``exc.status``; the client raises ``error_for_status``: one tree."""
    from ai_memory.core import errors

    own = [k for k in vars(errors).values()
           if isinstance(k, type) and issubclass(k, errors.AiMemoryError) and "status" in vars(k)]
    assert len(own) >= 10
    for kind in own:
        if kind is not errors.AiMemoryError:
            assert issubclass(kind, errors.error_for_status(kind.status)), kind
    assert errors.error_for_status(401) is errors.TokenRefused and errors.error_for_status(418) is errors.InputError
    assert errors.error_for_status(504) is errors.StorageError
