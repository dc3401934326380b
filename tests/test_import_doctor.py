"""Transcript import (idempotent, malformed lines counted) and doctor (a fix per problem)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Daemon, free_port, run_cli


def transcript(path: Path) -> Path:
    lines = [
        {"type": "user", "sessionId": "tx-1", "cwd": "/home/dev/acme-api", "uuid": "u1",
         "timestamp": "2026-08-20T09:00:00Z", "message": {"role": "user", "content": "Why does login flake?"}},
        {"type": "assistant", "sessionId": "tx-1", "cwd": "/home/dev/acme-api", "uuid": "a1",
         "timestamp": "2026-08-20T09:00:05Z", "message": {"role": "assistant", "content": [
             {"type": "text", "text": "Let me run the tests."},
             {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest -k login"}}]}},
        {"type": "user", "sessionId": "tx-1", "cwd": "/home/dev/acme-api", "uuid": "u2",
         "timestamp": "2026-08-20T09:00:09Z", "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "1 failed"}]}},
        {"type": "summary", "summary": "login flake"},
    ]
    text = "\n".join(json.dumps(x) for x in lines) + "\n{broken json\n"
    path.write_text(text)
    return path


def test_import_keeps_timestamps_and_is_idempotent(daemon: Daemon, tmp_path: Path) -> None:
    path = transcript(tmp_path / "t.jsonl")
    first = run_cli(daemon.data_dir, "import", "--agent", "claude", str(path), "--json", "--url", daemon.url)
    assert first.returncode == 0, first.stderr
    counts = json.loads(first.stdout)
    assert counts["stored"] == 4 and counts["malformed_lines"] == 1 and counts["skipped_lines"] == 1
    second = run_cli(daemon.data_dir, "import", "--agent", "claude", str(path), "--json", "--url", daemon.url)
    again = json.loads(second.stdout)
    assert again["stored"] == 0 and again["duplicates"] == 4
    _, page, _ = daemon.request("GET", "/v1/sessions/tx-1/observations")
    events = [(o["event"], o["occurred_at"]) for o in page["observations"]]
    assert events == [("user-prompt", "2026-08-20T09:00:00.000000Z"), ("stop", "2026-08-20T09:00:05.000000Z"),
                      ("pre-tool-use", "2026-08-20T09:00:05.000000Z"), ("post-tool-use", "2026-08-20T09:00:09.000000Z")]
    assert page["observations"][3]["tool_name"] == "Bash"


def test_import_with_daemon_down_is_one_line_exit_1(data_dir: Path, tmp_path: Path) -> None:
    path = transcript(tmp_path / "t.jsonl")
    done = run_cli(data_dir, "import", "--agent", "claude", str(path), "--url", f"http://127.0.0.1:{free_port()}")
    assert done.returncode == 1 and "not running" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_doctor_reports_each_problem_with_a_fix(data_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    data_dir.mkdir(parents=True)
    down = run_cli(data_dir, "doctor", "--url", f"http://127.0.0.1:{free_port()}", HOME=str(home))
    assert down.returncode == 1
    assert "fix: run: ai-memory serve" in down.stdout
    assert "fix: run: ai-memory install-hooks --agent claude" in down.stdout


def test_doctor_passes_when_all_is_well(daemon: Daemon, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    installed = run_cli(daemon.data_dir, "install-hooks", "--agent", "claude", "--url", daemon.url, HOME=str(home))
    assert installed.returncode == 0, installed.stderr
    daemon.post_hook({"session_id": "d", "hook_event_name": "Stop", "cwd": "/tmp"})
    done = run_cli(daemon.data_dir, "doctor", "--json", "--url", daemon.url, HOME=str(home))
    report = json.loads(done.stdout)
    assert done.returncode == 0, report
    names = {c["name"]: c for c in report["checks"]}
    assert names["hooks:claude"]["ok"] and names["daemon"]["ok"] and names["token"]["ok"]
    assert "claude" in names["last events"]["detail"]
