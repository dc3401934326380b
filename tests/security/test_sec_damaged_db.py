"""Item 15: a truncated or garbage memory.sqlite stopped the daemon with a bare traceback; a
deleted one started empty without a word (every teammate's token and the audit log gone). Now
start-up moves a damaged one aside and rebuilds it from wiki/ and raw/, users and audit kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import Daemon, run_cli

MEMORY = "Deploys go out on Tuesdays after the freeze."


def _populate(data_dir: Path) -> tuple[str, list[dict]]:
    daemon = Daemon(data_dir).start()
    try:
        done = run_cli(data_dir, "user", "add", "alice", "--json", AI_MEMORY_URL=daemon.url)
        token = json.loads(done.stdout)["token"]
        run_cli(data_dir, "user", "add", "mallory", AI_MEMORY_URL=daemon.url)
        run_cli(data_dir, "user", "revoke", "mallory", AI_MEMORY_URL=daemon.url)
        status, _, _ = daemon.request("POST", "/v1/pages", {"text": MEMORY, "kind": "decision", "project": "acme"},
                                      headers={"Authorization": f"Bearer {token}"})
        assert status == 201
        assert daemon.post_hook({"session_id": "s-1", "hook_event_name": "UserPromptSubmit",
                                 "prompt": "ship the release notes"})[0] == 202
        audit = daemon.request("GET", "/v1/audit?limit=100")[1]["entries"]
    finally:
        daemon.stop()
    return token, audit


def _damage(db: Path, how: str) -> None:
    if how == "truncated":
        size = db.stat().st_size
        with db.open("r+b") as fh:
            fh.truncate(size // 3)
    elif how == "garbage":
        db.write_bytes(os.urandom(64 * 1024))
    else:
        db.unlink()


@pytest.mark.parametrize("how", ["truncated", "garbage", "deleted"])
def test_start_up_rebuilds_a_damaged_database_and_keeps_users_and_audit(data_dir: Path, how: str) -> None:
    token, audit = _populate(data_dir)
    db = data_dir / "db" / "memory.sqlite"
    _damage(db, how)
    daemon = Daemon(data_dir).start()
    try:
        log = (data_dir.parent / f"daemon-{daemon.port}.log").read_text()
        lines = [line for line in log.splitlines() if "rebuilt from wiki/ and raw/" in line]
        assert len(lines) == 1 and ("missing" if how == "deleted" else "damaged") in lines[0], log[-2000:]
        assert "Traceback" not in log
        if how != "deleted":
            assert list((data_dir / "db").glob("memory.sqlite.damaged-*"))
        status, body, _ = daemon.request("POST", "/v1/query", {"q": "deploys Tuesdays freeze", "project": "acme"},
                                         headers={"Authorization": f"Bearer {token}"})
        assert status == 200 and body["hits"], body  # alice's token still works; the page is back
        users = {u["name"]: u for u in daemon.request("GET", "/v1/users")[1]["users"]}
        assert set(users) == {"alice", "mallory"} and users["mallory"]["revoked_at"] and not users["alice"]["revoked_at"]
        restored = daemon.request("GET", "/v1/audit?limit=100")[1]["entries"]
        assert [(e["id"], e["action"], e["target"]) for e in restored] == \
            [(e["id"], e["action"], e["target"]) for e in audit]
        assert len(daemon.request("GET", "/v1/sessions/s-1/observations")[1]["observations"]) == 1
    finally:
        daemon.stop()


def test_a_new_data_dir_says_nothing_about_rebuilding(data_dir: Path) -> None:
    daemon = Daemon(data_dir).start()
    daemon.stop()
    assert "rebuilt" not in (data_dir.parent / f"daemon-{daemon.port}.log").read_text()


def test_users_from_before_the_ledger_survive_a_rebuild_too(data_dir: Path) -> None:
    """A database whose users were never journaled: the first start journals them once."""
    _populate(data_dir)
    marker = data_dir / "db" / "rows.journaled"
    raw = data_dir / "raw"
    for segment in raw.glob("*.jsonl"):  # as if written before the ledger existed
        kept = [line for line in segment.read_text().splitlines(keepends=True) if '"ledger"' not in line]
        segment.write_text("".join(kept))
    marker.unlink()
    Daemon(data_dir).start().stop()  # journals the rows
    assert marker.exists()
    (data_dir / "db" / "memory.sqlite").unlink()
    daemon = Daemon(data_dir).start()
    try:
        assert {u["name"] for u in daemon.request("GET", "/v1/users")[1]["users"]} == {"alice", "mallory"}
    finally:
        daemon.stop()
