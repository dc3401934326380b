"""Every durable fact has a source outside SQLite: a database written through every verb that
changes state, deleted and rebuilt from the wiki and the journal, holds the same facts (claims
already made included); and every table says where it comes from (``store.origins``)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Daemon, run_cli
from llm_helpers import PROPOSAL, drive_session, llm_config, start_daemon, wait_for_state
from llm_stub import StubServer
from wiki_helpers import git, wait_until

from ai_memory.store.origins import JOURNALED, TABLES, Origin, is_internal

CWD = "/home/dev/acme-api"


def ok(daemon: Daemon, method: str, path: str, body: Any = None, status: int = 200) -> Any:
    got, answer, _ = daemon.request(method, path, body)
    assert got == status, (method, path, got, answer)
    return answer


def hook(daemon: Daemon, event: str, session: str, cwd: str = CWD, **extra: Any) -> None:
    status, body = daemon.post_hook({"session_id": session, "hook_event_name": event, "cwd": cwd, **extra})
    assert status == 202, body


def db_path(data_dir: Path) -> Path:
    return data_dir / "db" / "memory.sqlite"


def tables(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


def facts(data_dir: Path) -> dict[str, list[tuple]]:
    """Every row of every table that is not a cache or an index, without the columns a rebuild
    gives anew (ids handed out while indexing, stamps of when), and with a page's id read as its
    path."""
    conn = sqlite3.connect(db_path(data_dir))
    try:
        paths = dict(conn.execute("SELECT id, path FROM pages"))
        out = {}
        for table in tables(conn):
            origin = TABLES.get(table)
            if origin is None or origin.origin in (Origin.CACHE, Origin.INDEX):
                continue
            cursor = conn.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            rows = []
            for row in cursor:
                values = dict(zip(names, row))
                for ref in ("page_id", "src_id"):
                    if ref in values:
                        values[ref + "_path"] = paths.get(values[ref])
                rows.append(tuple(sorted((k, v) for k, v in values.items() if k not in origin.bookkeeping)))
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        conn.close()


def settle(daemon: Daemon) -> None:
    """Everything the daemon does by itself after a write (commits, index pages, compiles) done."""
    wiki = daemon.data_dir / "wiki"
    wait_until(lambda: git(wiki, "status", "--porcelain").strip() == "", timeout=30)


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    server = StubServer()
    server.model.default_consolidation = lambda prompt: PROPOSAL
    yield server
    server.close()


@pytest.fixture(scope="module")
def lived_in(tmp_path_factory: pytest.TempPathFactory, stub: StubServer, claude_fixtures) -> Iterator[Path]:
    """A data dir after a day of use through every verb that changes state, the daemon stopped."""
    data = tmp_path_factory.mktemp("origins") / "data"
    data.mkdir()
    (data / "llm.key").write_text("sk-stub\n")
    daemon = start_daemon(data, llm_config(stub, api_key_file="llm.key"))
    try:
        use_everything(daemon, claude_fixtures)
        settle(daemon)
    finally:
        daemon.stop()
    yield data


def use_everything(daemon: Daemon, fixtures: dict) -> None:
    # a compiled session, its automatic handoff, and its consolidation by the model
    drive_session(daemon, fixtures, "sess-one")
    wait_for_state(daemon, "sess-one", "done")
    # handoffs begun on purpose: one claimed by the next session, one cancelled, one left open
    claimed = ok(daemon, "POST", "/v1/handoffs", {"summary": "Finish the retry policy", "cwd": CWD,
                                                   "project": "acme-api", "next_steps": ["add jitter"]}, 201)
    cancelled = ok(daemon, "POST", "/v1/handoffs", {"summary": "Old plan", "project": "acme-api"}, 201)
    ok(daemon, "POST", f"/v1/handoffs/{cancelled['handoff']['id']}/cancel")
    brief = ok(daemon, "POST", "/v1/briefing", {"session_id": "sess-two", "cwd": CWD})
    assert brief["handoff"]["id"] == claimed["handoff"]["id"]
    ok(daemon, "POST", "/v1/handoffs", {"summary": "Left for tomorrow", "project": "acme-api", "shared": True}, 201)
    # messages: one popped, one cancelled, one waiting with a time to live
    for body in ("schema v2 is live", "ignore this", "deploy freeze on Friday"):
        ok(daemon, "POST", "/v1/messages", {"to_project": "web", "body": body, "from_project": "acme-api",
                                            "ttl_hours": 48}, 201)
    popped = ok(daemon, "POST", "/v1/messages/pop", {"project": "web", "session_id": "web-1"})["messages"]
    assert [m["body"] for m in popped] == ["schema v2 is live"]
    waiting = ok(daemon, "GET", "/v1/messages?project=web&state=open")["messages"]
    ok(daemon, "POST", f"/v1/messages/{waiting[0]['id']}/cancel")
    # memories: written, corrected, pinned, rated, used by a search, one deleted
    first = ok(daemon, "POST", "/v1/pages", {"text": "We retry webhooks three times.", "kind": "decision",
                                             "project": "acme-api"}, 201)
    ok(daemon, "POST", "/v1/pages", {"text": "We retry webhooks five times with jitter.", "kind": "decision",
                                     "project": "acme-api", "supersedes": first["path"]}, 201)
    rule = ok(daemon, "POST", "/v1/pages", {"text": "Never log tokens.", "kind": "rule", "project": "acme-api"}, 201)
    ok(daemon, "POST", "/v1/pages/pin", {"path": rule["path"]})
    ok(daemon, "POST", "/v1/feedback", {"path": rule["path"], "signal": "helpful"})
    gone = ok(daemon, "POST", "/v1/pages", {"text": "A scratch fact.", "kind": "fact", "project": "acme-api"}, 201)
    ok(daemon, "DELETE", f"/v1/pages?path={gone['path']}")
    ok(daemon, "POST", "/v1/query", {"q": "retry webhooks", "project": "acme-api"})
    # team users: one added, one added and revoked (with their audit rows)
    ok(daemon, "POST", "/v1/users", {"name": "alice"}, 201)
    ok(daemon, "POST", "/v1/users", {"name": "bob"}, 201)
    ok(daemon, "POST", "/v1/users/bob/revoke")
    # the project lifecycle: a session moved, a project renamed, another purged
    hook(daemon, "UserPromptSubmit", "sess-three", "/home/dev/scratch", prompt="Try the scratch idea")
    hook(daemon, "SessionEnd", "sess-three", "/home/dev/scratch")
    wait_for_state(daemon, "sess-three", "done")
    ok(daemon, "POST", "/v1/sessions/sess-three/move", {"project": "acme-api"})
    ok(daemon, "POST", "/v1/pages", {"text": "Beta keeps logs 30 days.", "kind": "fact", "project": "beta"}, 201)
    ok(daemon, "POST", "/v1/projects/rename", {"from": "beta", "to": "gamma"})
    ok(daemon, "POST", "/v1/pages", {"text": "Tmp is temporary.", "kind": "fact", "project": "tmp"}, 201)
    ok(daemon, "POST", "/v1/projects/purge", {"project": "tmp", "confirm": True})
    wait_until(lambda: _one(daemon, "SELECT COUNT(*) FROM page_stats WHERE access_count > 0"), timeout=10)


def _one(daemon: Daemon, sql: str) -> Any:
    with sqlite3.connect(db_path(daemon.data_dir)) as conn:
        row = conn.execute(sql).fetchone()
    return row[0] if row else None


def test_every_table_has_a_declared_origin(lived_in: Path) -> None:
    with sqlite3.connect(db_path(lived_in)) as conn:
        undeclared = [t for t in tables(conn) if t not in TABLES and not is_internal(t)]
    assert undeclared == [], f"declare where these come from in ai_memory/store/origins.py: {undeclared}"
    for name, origin in TABLES.items():
        assert origin.why, name
        assert (origin.origin is Origin.ROWS) == bool(origin.key), name


def rebuilt_copy(lived_in: Path, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(lived_in, data, symlinks=True)
    return data


def test_a_database_deleted_and_rebuilt_holds_every_fact(lived_in: Path, tmp_path: Path) -> None:
    before = facts(lived_in)
    assert all(before[t] for t in JOURNALED), {t: len(before[t]) for t in JOURNALED}  # the scenario wrote each
    data = rebuilt_copy(lived_in, tmp_path)
    shutil.rmtree(data / "db")
    done = run_cli(data, "reindex")
    assert done.returncode == 0, done.stderr
    daemon = Daemon(data).start()
    try:
        settle(daemon)
    finally:
        daemon.stop()
    after = facts(data)
    for table in before:
        assert after.get(table) == before[table], table


def test_claims_made_before_a_rebuild_are_not_made_again(lived_in: Path, tmp_path: Path) -> None:
    data = rebuilt_copy(lived_in, tmp_path)
    shutil.rmtree(data / "db")
    assert run_cli(data, "reindex").returncode == 0
    daemon = Daemon(data).start()
    try:
        brief = ok(daemon, "POST", "/v1/briefing", {"session_id": "sess-four", "cwd": CWD})
        assert "Finish the retry policy" not in brief["text"]  # accepted before: never handed over twice
        popped = ok(daemon, "POST", "/v1/messages/pop", {"project": "web", "session_id": "web-2", "limit": 10})
        assert [m["body"] for m in popped["messages"]] == ["deploy freeze on Friday"]
        status, _, _ = daemon.request("GET", "/v1/users")
        assert status == 200
        users = {u["name"]: u for u in ok(daemon, "GET", "/v1/users")["users"]}
        assert users["alice"]["revoked_at"] is None and users["bob"]["revoked_at"] is not None
    finally:
        daemon.stop()


def test_a_damaged_database_is_rebuilt_at_start_with_every_fact(lived_in: Path, tmp_path: Path) -> None:
    before = facts(lived_in)
    data = rebuilt_copy(lived_in, tmp_path)
    for side in ("-wal", "-shm"):
        (data / "db" / f"memory.sqlite{side}").unlink(missing_ok=True)
    db_path(data).write_bytes(b"not a database" * 1000)
    daemon = Daemon(data).start(timeout=60)
    try:
        settle(daemon)
    finally:
        daemon.stop()
    after = facts(data)
    for table in before:
        assert after.get(table) == before[table], table


def test_a_journal_from_before_row_records_still_gives_its_users(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "raw").mkdir(parents=True)
    (data / "raw" / "2025-01-02.jsonl").write_text(
        '{"ledger":"user","action":"add","name":"carol","at":"2025-01-02T10:00:00Z","token_hash":"ab12"}\n'
        '{"ledger":"audit","row":1,"at":"2025-01-02T10:00:00Z","user":"local","action":"user.add","target":"carol",'
        '"detail":""}\n'
        '{"ledger":"user","action":"revoke","name":"carol","at":"2025-01-03T10:00:00Z","token_hash":null}\n')
    assert run_cli(data, "reindex").returncode == 0
    with sqlite3.connect(db_path(data)) as conn:
        assert conn.execute("SELECT name, token_hash, revoked_at FROM users").fetchall() == [
            ("carol", "ab12", "2025-01-03T10:00:00Z")]
        assert conn.execute("SELECT action, target FROM audit").fetchall() == [("user.add", "carol")]


def test_hostile_row_records_cost_only_themselves(tmp_path: Path) -> None:
    """A journal from someone else's archive may name any table, column or value: only a
    journaled table's own columns with plain values are taken."""
    data = tmp_path / "data"
    (data / "raw").mkdir(parents=True)
    good = {"id": "h1", "summary": "Carry on", "created_at": "2025-01-02T10:00:00Z", "project": "acme"}
    lines = [
        {"ledger": "row", "table": "pages", "row": {"id": 1, "path": "x.md"}},
        {"ledger": "row", "table": "sqlite_master", "row": {"name": "t"}},
        {"ledger": "row", "table": "handoffs", "row": {**good, "id": "h2", "summary": {"nested": 1}}},
        {"ledger": "row", "table": "handoffs", "row": {"summary": "no key"}},
        {"ledger": "row", "table": "handoffs", "row": {**good, "id) VALUES (1); DROP TABLE users; --": "x"}},
        {"ledger": "row", "table": "messages", "gone": {"path": "not its key"}},
        {"ledger": "row", "table": "handoffs", "row": good},
    ]
    (data / "raw" / "2025-01-02.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = run_cli(data, "reindex")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db_path(data)) as conn:
        assert conn.execute("SELECT id, summary FROM handoffs").fetchall() == [("h1", "Carry on")]
        assert conn.execute("SELECT COUNT(*) FROM pages").fetchone() == (0,)
        assert conn.execute("SELECT COUNT(*) FROM users").fetchone() == (0,)
