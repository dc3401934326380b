"""Cross-project messages and the SessionStart briefing built from everything the memory holds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import Daemon


def send(daemon: Daemon, expect: int = 201, **body) -> dict:
    status, answer, _ = daemon.request("POST", "/v1/messages", body)
    assert status == expect, answer
    return answer.get("message", answer)


def pop(daemon: Daemon, project: str, limit: int = 1) -> list[dict]:
    status, body, _ = daemon.request("POST", "/v1/messages/pop", {"project": project, "limit": limit})
    assert status == 200, body
    return body["messages"]


def briefing(daemon: Daemon, cwd: Path, session_id: str = "s-new") -> str:
    status, body, _ = daemon.request("POST", "/v1/briefing?agent=codex", {"cwd": str(cwd), "session_id": session_id})
    assert status == 200, body
    return body["text"]


def test_messages_send_list_pop_cancel(daemon: Daemon) -> None:
    first = send(daemon, to_project="web", body="API v2 renamed the auth header", from_project="api", from_agent="claude")
    second = send(daemon, to_project="web", body="Second note")
    doomed = send(daemon, to_project="web", body="Never mind")
    assert first["state"] == "open" and first["expires_at"] > first["created_at"]
    status, body, _ = daemon.request("POST", f"/v1/messages/{doomed['id']}/cancel")
    assert status == 200 and body["message"]["state"] == "cancelled"
    status, listed, _ = daemon.request("GET", "/v1/messages?project=web&state=open")
    assert [m["id"] for m in listed["messages"]] == [first["id"], second["id"]]
    assert [m["body"] for m in pop(daemon, "web")] == ["API v2 renamed the auth header"]
    assert [m["id"] for m in pop(daemon, "web", limit=5)] == [second["id"]]
    assert pop(daemon, "web") == []
    status, body, _ = daemon.request("POST", f"/v1/messages/{first['id']}/cancel")
    assert status == 409 and "popped" in body["error"]


def test_pop_is_claim_once_under_concurrency(daemon: Daemon) -> None:
    for i in range(5):
        send(daemon, to_project="ops", body=f"note {i}")
    with ThreadPoolExecutor(max_workers=20) as pool:
        results = list(pool.map(lambda _: pop(daemon, "ops"), range(20)))
    delivered = [m["body"] for r in results for m in r]
    assert sorted(delivered) == [f"note {i}" for i in range(5)]


def test_messages_expire_and_are_sanitized(daemon: Daemon) -> None:
    send(daemon, to_project="web", body="short-lived", ttl_s=1)
    secret = send(daemon, to_project="web", body="password=hunter2hunter2 for staging")
    assert "hunter2" not in secret["body"]
    import time
    time.sleep(1.2)
    status, listed, _ = daemon.request("GET", "/v1/messages?project=web")
    assert {m["body"]: m["state"] for m in listed["messages"]}["short-lived"] == "expired"
    assert [m["id"] for m in pop(daemon, "web", limit=5)] == [secret["id"]]
    assert send(daemon, 400, to_project="web")["error"] == "missing body"
    assert send(daemon, 400, body="x")["error"] == "missing to_project"
    assert "ttl_s" in send(daemon, 400, to_project="web", body="x", ttl_s=-1)["error"]


def test_briefing_has_every_section(daemon: Daemon, tmp_path: Path) -> None:
    repo = tmp_path / "acme-api"
    repo.mkdir()
    project = daemon.request("GET", f"/v1/briefing?cwd={repo}")[1]["project"]
    for text, kind, extra in (
        ("Every endpoint needs an owner team.", "rule", {}),
        ("We chose Postgres over MySQL.", "decision", {}),
        ("The test DB must be reset before the e2e suite.", "gotcha", {}),
        ("Answer in British English.", "preference", {"scope": "_global"}),
    ):
        status, stored, _ = daemon.request("POST", "/v1/pages", {"text": text, "kind": kind, "project": project, **extra})
        assert status == 201, stored
        if kind in ("rule", "decision"):  # pinning is a frontmatter edit the watcher picks up
            page = daemon.data_dir / "wiki" / stored["path"]
            page.write_text(page.read_text().replace("---\n", "---\npinned: true\n", 1))
    daemon.request("POST", f"/v1/reindex")
    send(daemon, to_project=project, body="The web team needs the new endpoint by Friday", from_project="web")
    daemon.request("POST", "/v1/handoffs", {"cwd": str(repo), "summary": "Half-way through the billing refactor",
                                            "next_steps": ["finish invoices.py"]})
    for i in range(4):
        daemon.post_hook({"session_id": f"old-{i}", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                          "prompt": f"task number {i}"})
    text = briefing(daemon, repo)
    assert text.startswith("<ai-memory-briefing>") and text.endswith("</ai-memory-briefing>")
    assert "not instructions" in text
    for expected in ("Half-way through the billing refactor", "finish invoices.py", "new endpoint by Friday",
                     "Every endpoint needs an owner team", "Postgres over MySQL", "British English",
                     "reset before the e2e suite"):
        assert expected in text, expected
    assert sum("task number" in line for line in text.splitlines()) == 3  # the last 3 sessions
    again = briefing(daemon, repo, "s-next")
    assert "billing refactor" not in again and "by Friday" not in again  # both delivered once


def test_briefing_stays_within_its_bound(daemon: Daemon, tmp_path: Path) -> None:
    huge = "word " * 3000
    status, body, _ = daemon.request("POST", "/v1/handoffs", {"cwd": str(tmp_path), "summary": huge,
                                                              "next_steps": [huge] * 6, "open_questions": [huge] * 6})
    assert status == 201, body  # a handoff's body stays within its route's 256 KiB
    project = daemon.request("GET", f"/v1/briefing?cwd={tmp_path}")[1]["project"]
    for i in range(60):
        send(daemon, to_project=project, body=f"message {i} " + "x" * 1500)
    for i in range(30):
        daemon.request("POST", "/v1/pages", {"text": f"Gotcha {i}: " + "y " * 900, "kind": "gotcha", "project": project})
    text = briefing(daemon, tmp_path)
    assert len(text) <= 8000 and text.endswith("</ai-memory-briefing>")
    assert "more left out" in text and "message 0" in text


def test_a_retried_message_or_handoff_is_stored_once(daemon: Daemon, tmp_path: Path) -> None:
    for path, body, key in (("/v1/messages", {"to_project": "web", "body": "once"}, "message"),
                            ("/v1/handoffs", {"cwd": str(tmp_path), "summary": "once"}, "handoff")):
        first = daemon.request("POST", path, body, headers={"Idempotency-Key": "retry-1"})
        again = daemon.request("POST", path, body, headers={"Idempotency-Key": "retry-1"})
        assert (first[0], again[0]) == (201, 200)
        assert again[1][key]["id"] == first[1][key]["id"] and again[1]["created"] is False
    assert len(daemon.request("GET", "/v1/messages?project=web")[1]["messages"]) == 1


def test_only_the_sender_cancels_a_message(daemon: Daemon) -> None:
    sent = send(daemon, to_project="web", body="from alice", owner="alice")
    status, body, _ = daemon.request("POST", f"/v1/messages/{sent['id']}/cancel?owner=bob")
    assert status == 403, body
    status, body, _ = daemon.request("POST", f"/v1/messages/{sent['id']}/cancel?owner=alice")
    assert status == 200 and body["message"]["state"] == "cancelled"


def test_a_get_briefing_claims_nothing_a_post_claims_once(daemon: Daemon, tmp_path: Path) -> None:
    """Clients retry a GET as safe: a GET with a session shows no handoff and takes no message,
    so a lost reply cannot have claimed work nobody saw; the POST (the hook's) claims."""
    cwd = tmp_path / "getproj"
    cwd.mkdir()
    status, body, _ = daemon.request("POST", "/v1/handoffs", {"summary": "half-way through the retry work",
                                                               "cwd": str(cwd)})
    assert status in (200, 201), body
    project = daemon.request("GET", f"/v1/briefing?cwd={cwd}")[1]["project"]
    send(daemon, to_project=project, body="the webhook secret rotated")
    for _ in range(2):
        status, got, _ = daemon.request("GET", f"/v1/briefing?cwd={cwd}&session_id=s-get&agent=codex")
        assert status == 200 and got["handoff"] is None and got["messages"] == []
    status, posted, _ = daemon.request("POST", "/v1/briefing?agent=codex", {"cwd": str(cwd), "session_id": "s-post"})
    assert status == 200 and posted["handoff"]["summary"] == "half-way through the retry work"
    assert [m["body"] for m in posted["messages"]] == ["the webhook secret rotated"]
