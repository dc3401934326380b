"""Team mode: per-user tokens, private pages and handoffs per owner, attribution, audit, rate limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from conftest import Daemon, run_cli
from wiki_helpers import wait_until


def add_user(data_dir: Path, name: str, daemon: Daemon | None = None) -> str:
    env = {"AI_MEMORY_URL": daemon.url} if daemon else {}
    result = run_cli(data_dir, "user", "add", name, "--json", **env)
    assert result.returncode == 0, result.stderr
    added = json.loads(result.stdout)
    assert added["user"]["name"] == name and added["token"].startswith("aim_")
    return str(added["token"])


def call(daemon: Daemon, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any, dict[str, str]]:
    return daemon.request(method, path, body, headers={"Authorization": f"Bearer {token}"})


def ok(daemon: Daemon, token: str, method: str, path: str, body: Any = None) -> Any:
    status, answer, _ = call(daemon, token, method, path, body)
    assert 200 <= status < 300, (status, answer)
    return answer


def search_paths(daemon: Daemon, token: str, q: str, **extra: Any) -> list[str]:
    found = ok(daemon, token, "POST", "/v1/query", {"q": q, "project": "acme-api", **extra})
    return [h["path"] for h in found["hits"]]


def files_holding(data_dir: Path, secret: str) -> list[str]:
    needle = secret.encode()
    return [str(p) for p in data_dir.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_second_user_cannot_see_the_first_users_private_page(daemon: Daemon) -> None:
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    text = "Alice keeps the staging database password hint under the blue notebook."
    # a user token cannot speak for someone else: the owner in the body is ignored
    mine = ok(daemon, alice, "POST", "/v1/pages", {"text": text, "kind": "fact", "project": "acme-api",
                                                   "scope": "private", "owner": "bob"})
    meta = yaml.safe_load((daemon.data_dir / "wiki" / mine["path"]).read_text().split("---\n")[1])
    assert meta["owner"] == "alice" and meta["scope"] == "private"

    assert mine["path"] in search_paths(daemon, alice, "staging database password hint")
    assert mine["path"] not in search_paths(daemon, bob, "staging database password hint")
    assert mine["path"] not in search_paths(daemon, bob, "staging database password hint", as_of="2999-01-01")
    for ref in (f"id={mine['id']}", f"path={mine['path']}"):
        assert call(daemon, bob, "GET", f"/v1/pages?{ref}")[0] == 404
        assert call(daemon, alice, "GET", f"/v1/pages?{ref}")[0] == 200
    assert mine["path"] not in [p["path"] for p in ok(daemon, bob, "GET", "/v1/recent?project=acme-api")["pages"]]
    assert mine["path"] in [p["path"] for p in ok(daemon, alice, "GET", "/v1/recent?project=acme-api")["pages"]]
    assert "private" not in ok(daemon, bob, "GET", "/v1/meta?project=acme-api")["counts"]
    assert ok(daemon, alice, "GET", "/v1/meta?project=acme-api")["counts"]["private"] == {"fact": 1}
    # nor correct it, nor delete it
    status, _, _ = call(daemon, bob, "POST", "/v1/pages", {"text": "No hint at all.", "kind": "fact",
                                                          "project": "acme-api", "supersedes": mine["id"]})
    assert status == 404
    assert call(daemon, bob, "DELETE", f"/v1/pages?id={mine['id']}")[0] == 404
    assert (daemon.data_dir / "wiki" / mine["path"]).exists()


def test_handoffs_are_owner_scoped_unless_shared(daemon: Daemon, tmp_path: Path) -> None:
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    repo = tmp_path / "repo"
    repo.mkdir()
    cwd = str(repo)
    private = ok(daemon, alice, "POST", "/v1/handoffs", {"summary": "alice only", "cwd": cwd, "owner": "bob"})["handoff"]
    assert private["owner"] == "alice"
    take = {"cwd": cwd, "agent": "codex"}
    assert ok(daemon, bob, "POST", "/v1/handoffs/accept", {**take, "session_id": "b-1", "owner": "alice"})["handoff"] is None
    assert private["id"] not in [h["id"] for h in ok(daemon, bob, "GET", "/v1/handoffs")["handoffs"]]
    shared = ok(daemon, alice, "POST", "/v1/handoffs", {"summary": "anyone", "cwd": cwd, "shared": True})["handoff"]
    assert ok(daemon, bob, "POST", "/v1/handoffs/accept", {**take, "session_id": "b-2"})["handoff"]["id"] == shared["id"]
    assert ok(daemon, alice, "POST", "/v1/handoffs/accept", {**take, "session_id": "a-1"})["handoff"]["id"] == private["id"]


def test_hook_events_and_their_session_handoff_belong_to_the_token_user(daemon: Daemon, tmp_path: Path) -> None:
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    repo = tmp_path / "svc"
    repo.mkdir()
    base = {"session_id": "alice-s1", "cwd": str(repo)}
    for event in ({"hook_event_name": "UserPromptSubmit", "prompt": "Add the rate limiter"},
                  {"hook_event_name": "Stop", "last_assistant_message": "Done. Next steps:\n- tests"},
                  {"hook_event_name": "SessionEnd", "reason": "exit"}):
        status, _, _ = call(daemon, alice, "POST", "/hook?agent=claude&owner=bob", {**base, **event})
        assert status == 202
    rows = ok(daemon, alice, "GET", "/v1/sessions/alice-s1/observations")["observations"]
    assert {r["owner"] for r in rows} == {"alice"}
    wait_until(lambda: ok(daemon, alice, "GET", "/status")["wiki"]["sessions_compiled"] >= 1, timeout=10)
    take = {"cwd": str(repo), "agent": "codex"}
    assert ok(daemon, bob, "POST", "/v1/handoffs/accept", {**take, "session_id": "bob-s1"})["handoff"] is None
    assert ok(daemon, alice, "POST", "/v1/handoffs/accept", {**take, "session_id": "alice-s2"})["handoff"]["session_id"] == "alice-s1"


def test_writes_are_in_the_audit_log_which_only_the_admin_reads(daemon: Daemon) -> None:
    alice = add_user(daemon.data_dir, "alice", daemon)
    first = ok(daemon, alice, "POST", "/v1/pages", {"text": "Deploys happen on Tuesdays.", "kind": "decision",
                                                    "project": "acme-api"})
    second = ok(daemon, alice, "POST", "/v1/pages", {"text": "Deploys happen on Wednesdays.", "kind": "decision",
                                                     "project": "acme-api", "supersedes": first["id"]})
    ok(daemon, alice, "POST", "/v1/messages", {"to_project": "web", "body": "API v2 is live"})
    ok(daemon, alice, "DELETE", f"/v1/pages?id={second['id']}")
    result = run_cli(daemon.data_dir, "audit", "--json", AI_MEMORY_URL=daemon.url)
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    mine = [(e["user"], e["action"], e["target"]) for e in reversed(entries) if e["user"] == "alice"]
    assert [a for _, a, _ in mine] == ["write", "correct", "message.send", "delete"]
    assert mine[0][2] == first["path"] and mine[3][2] == second["path"]
    assert [e["action"] for e in entries if e["user"] == "local"][-1] == "user.add"
    for path in ("/v1/audit", "/v1/users"):
        assert call(daemon, alice, "GET", path)[0] == 403
    assert call(daemon, alice, "POST", "/v1/reindex", {})[0] == 403


def test_a_revoked_token_is_refused_at_once_and_users_survive_reindex(daemon: Daemon) -> None:
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    assert call(daemon, bob, "GET", "/status")[0] == 200
    ok(daemon, daemon.token, "POST", "/v1/reindex", {})  # users and the audit log are DB-only state
    assert call(daemon, bob, "GET", "/status")[0] == 200
    result = run_cli(daemon.data_dir, "user", "revoke", "bob", AI_MEMORY_URL=daemon.url)
    assert result.returncode == 0, result.stderr
    status, body, _ = call(daemon, bob, "GET", "/status")
    assert status == 401 and body["error"] == "missing or wrong token"
    assert call(daemon, alice, "GET", "/status")[0] == 200
    listed = json.loads(run_cli(daemon.data_dir, "user", "list", "--json", AI_MEMORY_URL=daemon.url).stdout)
    by_name = {u["name"]: u for u in listed}
    assert by_name["bob"]["revoked_at"] and not by_name["alice"]["revoked_at"]
    assert by_name["alice"]["last_used_at"] and set(by_name["alice"]) == {"name", "created_at", "last_used_at", "revoked_at"}
    assert run_cli(daemon.data_dir, "user", "add", "alice", AI_MEMORY_URL=daemon.url).returncode == 1  # one token each
    actions = [e["action"] for e in ok(daemon, daemon.token, "GET", "/v1/audit?limit=10")["entries"]]
    assert actions[:2] == ["user.revoke", "reindex"]
    for token in (alice, bob):
        assert files_holding(daemon.data_dir, token) == []


def test_users_added_without_a_daemon_work_when_it_starts(data_dir: Path) -> None:
    carol = add_user(data_dir, "carol")
    assert files_holding(data_dir, carol) == []
    listed = run_cli(data_dir, "user", "list")
    assert listed.returncode == 0 and "carol" in listed.stdout
    d = Daemon(data_dir).start()
    try:
        assert call(d, carol, "GET", "/status")[0] == 200
        assert call(d, d.token, "GET", "/status")[0] == 200  # the admin token still works
    finally:
        d.stop()
    assert run_cli(data_dir, "user", "revoke", "carol").returncode == 0
    d = Daemon(data_dir).start()
    try:
        assert call(d, carol, "GET", "/status")[0] == 401
    finally:
        d.stop()


def test_the_admin_token_may_act_for_an_owner(daemon: Daemon) -> None:
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    stored = ok(daemon, daemon.token, "POST", "/v1/pages", {"text": "Alice's on-call phone is in the safe.",
                                                            "kind": "fact", "project": "acme-api",
                                                            "scope": "private", "owner": "alice"})
    assert call(daemon, alice, "GET", f"/v1/pages?id={stored['id']}")[0] == 200
    assert call(daemon, bob, "GET", f"/v1/pages?id={stored['id']}")[0] == 404
    entry = ok(daemon, daemon.token, "GET", "/v1/audit?limit=1&user=alice")["entries"][0]
    assert entry["action"] == "write" and entry["detail"].endswith("(admin token)")


def test_the_rate_limit_answers_429_with_retry_after_per_token(data_dir: Path) -> None:
    alice, bob = add_user(data_dir, "alice"), add_user(data_dir, "bob")
    d = Daemon(data_dir, env={"AI_MEMORY_SERVER_RATE_LIMIT_PER_S": "0.5", "AI_MEMORY_SERVER_RATE_BURST": "3"}).start()
    try:
        statuses = [call(d, alice, "GET", "/status") for _ in range(4)]
        assert [s for s, _, _ in statuses[:3]] == [200, 200, 200]
        status, body, headers = statuses[3]
        assert status == 429 and body["error"] == "rate limit exceeded"
        assert int(headers["Retry-After"]) >= 1
        assert call(d, bob, "GET", "/status")[0] == 200  # each token has its own bucket
        assert all(d.request("GET", "/status")[0] == 200 for _ in range(10))  # the admin token is not limited
        assert d.request("GET", "/health", auth=False)[0] == 200
    finally:
        d.stop()


def test_a_question_naming_a_user_reads_that_users_turn_first(daemon: Daemon, tmp_path: Path) -> None:
    """Two people in one session: a question that names one of them gets that person's turn
    as the evidence, though the other's says the words louder."""
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    repo = tmp_path / "acme-api"
    repo.mkdir()
    base = {"session_id": "pair-s1", "cwd": str(repo)}
    for token, prompt in ((alice, "Keep the cache TTL at 300 seconds in staging."),
                          (bob, "The cache TTL, the whole cache TTL story: 60 seconds in production.")):
        assert call(daemon, token, "POST", "/hook?agent=claude", {**base, "hook_event_name": "UserPromptSubmit",
                                                                  "prompt": prompt})[0] == 202
    assert call(daemon, alice, "POST", "/hook?agent=claude", {**base, "hook_event_name": "SessionEnd",
                                                              "reason": "exit"})[0] == 202

    def evidence() -> list[str]:
        hits = ok(daemon, alice, "POST", "/v1/query", {"q": "What did alice say about the cache TTL?",
                                                      "project": "acme-api"})["hits"]
        return [e["snippet"] for h in hits if h["session_id"] == "pair-s1" for e in h["evidence"]]

    wait_until(lambda: len(evidence()) == 2, timeout=15)
    assert "300 seconds" in evidence()[0] and "60 seconds" in evidence()[1]


def test_a_users_daily_storage_quota_answers_429_and_holds_across_a_restart(data_dir: Path, tmp_path: Path) -> None:
    alice, bob = add_user(data_dir, "alice"), add_user(data_dir, "bob")
    env = {"AI_MEMORY_SERVER_USER_BYTES_PER_DAY": "100000"}
    repo = tmp_path / "acme-api"
    repo.mkdir()
    words = " ".join(f"word{i % 97}" for i in range(1500))  # ~10 KB, stored in the body and the payload

    def event(n: int, who: str) -> dict[str, Any]:
        return {"session_id": f"quota-{who}", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                "prompt": f"{n}: {words}"}

    d = Daemon(data_dir, env=env).start()
    try:
        answers = [call(d, alice, "POST", "/hook?agent=claude", event(n, "alice")) for n in range(20)]
        accepted = [s for s, _, _ in answers if s == 202]
        refused = next(a for a in answers if a[0] != 202)
        assert 3 <= len(accepted) <= 6 and answers[len(accepted)] is refused, [a[0] for a in answers]
        status, body, headers = refused
        assert status == 429 and body["error"] == "daily storage quota exceeded", body
        assert "server.user_bytes_per_day" in body["detail"] and 1 <= int(headers["Retry-After"]) <= 86400
        assert call(d, bob, "POST", "/hook?agent=claude", event(0, "bob"))[0] == 202  # a quota per user
        assert d.request("POST", "/hook?agent=claude", event(99, "admin"))[0] == 202  # the admin is not counted
        today = d.request("GET", "/status")[1]["quota"]
        assert today["bytes_per_day"] == 100000 and 0 < today["today"]["alice"] <= 100000
        assert "local" not in today["today"]
    finally:
        d.stop()
    again = Daemon(data_dir, env=env).start()  # counted from the events stored today: no second quota
    try:
        assert call(again, alice, "POST", "/hook?agent=claude", event(50, "alice"))[0] == 429
        assert again.request("GET", "/status")[1]["quota"]["today"]["alice"] == today["today"]["alice"]
        assert call(again, bob, "POST", "/hook?agent=claude", event(1, "bob"))[0] == 202
    finally:
        again.stop()
