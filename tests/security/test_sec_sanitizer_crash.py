"""Item 4: a key block without its END line beside 160 KB of log lines once crashed the sanitizer
(a negative cut position): 500 on every write route, and a spool file retried every 5 s forever."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from conftest import Daemon
from wiki_helpers import wait_until

KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzQ8d1vN3kq0bJm7x2Lr9Yt5Wc4Hs6Pa8Ue1Fg0Ri\n"
LOG = "".join(f"2024-05-01 12:00:{i % 60:02d} INFO worker processed job {i} in 12 ms\n" for i in range(2800))
TEXT = KEY + LOG
PAYLOAD = {"session_id": "crash-1", "hook_event_name": "PostToolUse", "cwd": "/tmp/crash", "tool_name": "Bash",
           "tool_input": {"command": "cat server.log"}, "tool_response": {"stdout": TEXT}}


def test_every_write_route_stores_the_text_that_crashed_the_sanitizer(daemon: Daemon) -> None:
    assert len(TEXT) > 160_000
    envelope = {"agent": "claude", "event": "PostToolUse", "idempotency_key": "crash-env", "payload": PAYLOAD}
    for method, path, body in (
        ("POST", "/hook?agent=claude", PAYLOAD),
        ("POST", "/hook/envelope", envelope),
        ("POST", "/hook/batch?agent=claude", [PAYLOAD]),
        ("POST", "/v1/pages", {"text": TEXT, "kind": "note", "project": "crash"}),
        ("POST", "/v1/messages", {"to_project": "crash", "body": TEXT}),
    ):
        status, reply, _ = daemon.request(method, path, body)
        assert status < 500, (path, status, reply)
        if path.startswith("/hook/batch"):
            assert reply["results"][0]["status"] == 202, reply
    status, obs, _ = daemon.request("GET", "/v1/sessions/crash-1/observations")
    assert status == 200 and obs["observations"]
    stored = json.dumps(obs)
    assert "MIIEowIBAAKCAQEAzQ8d1vN3kq0bJm7x2Lr9" not in stored and "[REDACTED:private_key]" in stored


def test_a_spooled_event_with_that_text_is_delivered_not_retried_forever(daemon: Daemon) -> None:
    spool = daemon.data_dir / "spool"
    envelope = {"agent": "claude", "event": "PostToolUse", "idempotency_key": "crash-spool",
                "payload": {**PAYLOAD, "session_id": "crash-spool"}}
    name = f"{int(time.time() * 1000)}-crash.json"
    tmp = spool / f".{name}.tmp"
    tmp.write_text(json.dumps(envelope))
    os.replace(tmp, spool / name)
    wait_until(lambda: not (spool / name).exists(), timeout=30)
    assert not (spool / "bad" / name).exists()
    status, obs, _ = daemon.request("GET", "/v1/sessions/crash-spool/observations")
    assert status == 200 and len(obs["observations"]) == 1
    assert "Traceback" not in Path(daemon.data_dir.parent / f"daemon-{daemon.port}.log").read_text()
