"""Every Claude Code payload is accepted, durable, readable back, and sanitized."""

from __future__ import annotations

import copy
import json

from conftest import Daemon

GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_KEY = "AKIA" + "Z7QX4MPLE2KEYS5XY"


def test_every_fixture_is_accepted_and_read_back(daemon: Daemon, claude_fixtures) -> None:
    sent = 0
    for event, payloads in claude_fixtures.items():
        for i, payload in enumerate(payloads):
            body = copy.deepcopy(payload)
            body["session_id"] = f"fixture-{event}-{i}"
            status, reply = daemon.post_hook(body)
            assert status == 202, (event, reply)
            assert reply["duplicate"] is False and reply["id"]
            code, page, _ = daemon.request("GET", f"/v1/sessions/fixture-{event}-{i}/observations")
            assert code == 200
            [obs] = page["observations"]
            assert obs["id"] == reply["id"]
            assert obs["source_event"] == event
            assert obs["payload"]["cwd"] == payload["cwd"]
            sent += 1
    assert sent >= 40


def test_secrets_in_fixtures_are_redacted_before_storage(daemon: Daemon, claude_fixtures) -> None:
    prompt = copy.deepcopy(claude_fixtures["UserPromptSubmit"][0])
    prompt["prompt"] += f"\nuse token {GITHUB_TOKEN} and key {AWS_KEY}"
    tool = copy.deepcopy(claude_fixtures["PostToolUse"][0])
    tool["tool_response"] = {"stdout": f"export GITHUB_TOKEN={GITHUB_TOKEN}\n"}
    for payload in (prompt, tool):
        status, _ = daemon.post_hook(payload)
        assert status == 202
    _, page, _ = daemon.request("GET", f"/v1/sessions/{prompt['session_id']}/observations")
    stored = json.dumps(page)
    assert GITHUB_TOKEN not in stored and AWS_KEY not in stored
    assert "[REDACTED:github_token]" in stored
    raw = "".join(p.read_text() for p in (daemon.data_dir / "raw").glob("*.jsonl"))
    assert GITHUB_TOKEN not in raw and "[REDACTED:" in raw
    db = (daemon.data_dir / "db" / "memory.sqlite").read_bytes()
    assert GITHUB_TOKEN.encode() not in db


def test_event_names_are_normalized_to_the_closed_set(daemon: Daemon) -> None:
    cases = {"UserPromptSubmit": "user-prompt", "BeforeAgent": "user-prompt", "AfterTool": "post-tool-use",
             "PreCompress": "pre-compact", "SessionEnd": "session-end", "SomethingNew": "other"}
    for name, kind in cases.items():
        status, _ = daemon.post_hook({"session_id": "norm", "hook_event_name": name, "cwd": "/r",
                                      "prompt": "p", "surprise_field": {"kept": True}}, agent="gemini")
        assert status == 202
    _, page, _ = daemon.request("GET", "/v1/sessions/norm/observations")
    assert [o["event"] for o in page["observations"]] == list(cases.values())
    assert all(o["payload"]["surprise_field"] == {"kept": True} for o in page["observations"])
    assert {o["agent"] for o in page["observations"]} == {"gemini"}


def test_event_from_query_when_body_has_none(daemon: Daemon) -> None:
    status, _, _ = daemon.request("POST", "/hook?agent=codex&event=Stop",
                                  {"session_id": "q1", "last_assistant_message": "done"})
    assert status == 202
    _, page, _ = daemon.request("GET", "/v1/sessions/q1/observations")
    assert page["observations"][0]["event"] == "stop"


def test_idempotency_key_returns_original(daemon: Daemon) -> None:
    payload = {"session_id": "idem", "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    first = daemon.post_hook(payload, **{"Idempotency-Key": "k-1"})
    second = daemon.post_hook(payload, **{"Idempotency-Key": "k-1"})
    assert first[0] == 202 and second[0] == 200
    assert second[1] == {"id": first[1]["id"], "duplicate": True}
    body_key = dict(payload, idempotency_key="k-2")
    a, b = daemon.post_hook(body_key), daemon.post_hook(body_key)
    assert (a[0], b[0]) == (202, 200) and b[1]["id"] == a[1]["id"]
    _, page, _ = daemon.request("GET", "/v1/sessions/idem/observations")
    assert len(page["observations"]) == 2


def test_client_timestamp_is_kept(daemon: Daemon) -> None:
    daemon.post_hook({"session_id": "ts", "hook_event_name": "UserPromptSubmit", "prompt": "old",
                      "timestamp": "2023-05-08T13:56:00Z"})
    _, page, _ = daemon.request("GET", "/v1/sessions/ts/observations")
    assert page["observations"][0]["occurred_at"] == "2023-05-08T13:56:00.000000Z"
    status, reply = daemon.post_hook({"session_id": "ts", "hook_event_name": "Stop", "timestamp": "yesterday"})
    assert status == 400 and reply["error"] == "invalid timestamp"


def test_batch_gives_a_result_per_item(daemon: Daemon) -> None:
    items = [{"session_id": "b", "hook_event_name": "UserPromptSubmit", "prompt": f"p{i}"} for i in range(5)]
    items.append({"no_session": True})
    items.append({"agent": "codex", "idempotency_key": "env-1",
                  "payload": {"session_id": "b", "hook_event_name": "Stop"}})
    status, reply, _ = daemon.request("POST", "/hook/batch?agent=claude", items)
    assert status == 200 and reply["accepted"] == 6
    assert [r["status"] for r in reply["results"]] == [202] * 5 + [400, 202]
    status, reply, _ = daemon.request("POST", "/hook/batch", [{}] * 257)
    assert status == 413 and reply["error"] == "batch too large"


def test_status_reports_counts_and_writer(daemon: Daemon) -> None:
    for i in range(3):
        daemon.post_hook({"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": str(i)})
    status, body, _ = daemon.request("GET", "/status")
    assert status == 200
    assert body["counts"] == {"sessions": 1, "observations": 3, "pages": 0}
    assert body["writer"]["batches"] >= 1 and body["writer"]["mean_batch"] >= 1
    assert body["data_dir"] == str(daemon.data_dir.resolve())
    assert "sqlite" in body and body["uptime_s"] >= 0


def test_a_late_delivery_keeps_the_time_the_client_captured(daemon: Daemon) -> None:
    import time

    hour_ago_ms = int(time.time() * 1000) - 3_600_000
    for key, captured in (("late", hour_ago_ms), ("skewed", int(time.time() * 1000) + 86_400_000)):
        envelope = {"agent": "codex", "event": "Stop", "idempotency_key": key, "captured_at": captured,
                    "payload": {"session_id": f"cap-{key}", "hook_event_name": "Stop"}}
        assert daemon.request("POST", "/hook/envelope", envelope)[0] == 202
    late = daemon.request("GET", "/v1/sessions/cap-late/observations")[1]["observations"][0]
    skewed = daemon.request("GET", "/v1/sessions/cap-skewed/observations")[1]["observations"][0]
    assert late["occurred_at"] < late["received_at"] and late["occurred_at"].startswith(
        time.strftime("%Y-%m-%dT%H", time.gmtime(hour_ago_ms / 1000)))
    assert skewed["occurred_at"] == skewed["received_at"]  # a clock a day ahead is not believed
