"""Transcript import (idempotent, malformed lines counted) and doctor (a fix per problem)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Daemon, free_port, run_cli


def transcript(path: Path, session: str = "tx-1", ids: str = "") -> Path:
    lines = [
        {"type": "user", "sessionId": session, "cwd": "/home/dev/acme-api", "uuid": ids + "u1",
         "timestamp": "2026-08-20T09:00:00Z", "message": {"role": "user", "content": "Why does login flake?"}},
        {"type": "assistant", "sessionId": session, "cwd": "/home/dev/acme-api", "uuid": ids + "a1",
         "timestamp": "2026-08-20T09:00:05Z", "message": {"role": "assistant", "content": [
             {"type": "text", "text": "Let me run the tests."},
             {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest -k login"}}]}},
        {"type": "user", "sessionId": session, "cwd": "/home/dev/acme-api", "uuid": ids + "u2",
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


def test_a_line_nested_too_deeply_is_skipped_counted_and_the_import_goes_on(daemon: Daemon, tmp_path: Path) -> None:
    path = transcript(tmp_path / "deep.jsonl", session="tx-deep", ids="deep-")
    lines = path.read_text().splitlines()
    deep = ('{"type": "user", "sessionId": "tx-deep", "uuid": "deep-x", "message": {"role": "user", "content": '
            + "[" * 100_000 + "]" * 100_000 + "}}")
    path.write_text("\n".join([lines[0], deep, *lines[1:]]) + "\n")
    done = run_cli(daemon.data_dir, "import", "--agent", "claude", str(path), "--json", "--url", daemon.url)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and f"skipped {path} line 2: nested too deeply" in done.stderr
    counts = json.loads(done.stdout)
    assert counts["unreadable_lines"] == 1 and counts["stored"] == 4 and counts["malformed_lines"] == 1
    _, page, _ = daemon.request("GET", "/v1/sessions/tx-deep/observations")
    assert len(page["observations"]) == 4  # the lines before and after the deep one
    text = run_cli(daemon.data_dir, "import", "--agent", "claude", str(path), "--url", daemon.url)
    assert text.returncode == 0 and "unreadable lines: 1" in text.stdout


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


def _transcript_tree(root: Path) -> Path:
    """~/.claude/projects/ as Claude Code lays it out: a folder per project, a .jsonl per session."""
    for n, project in enumerate(("-home-dev-acme-api", "-home-dev-web")):
        folder = root / project
        folder.mkdir(parents=True)
        transcript(folder / f"s{n}.jsonl", session=f"tx-dir-{n}", ids=f"dir{n}-")
    (root / "-home-dev-web" / "notes.txt").write_text("not a transcript")
    return root


def test_import_takes_a_folder_recursively_with_one_bar_over_all_files(daemon: Daemon, tmp_path: Path) -> None:
    import sys

    from conftest import cli_env, on_a_terminal

    root = _transcript_tree(tmp_path / "projects")
    # stderr on a terminal: the bar shows, as for a person
    done, bar = on_a_terminal([sys.executable, "-m", "ai_memory.cli", "import", "--agent", "claude", str(root),
                               "--json", "--url", daemon.url], cli_env(daemon.data_dir), stream="stderr")
    assert done.returncode == 0, bar
    counts = json.loads(done.stdout)
    assert counts["files"] == 2 and counts["stored"] == 8, counts
    assert "2/2" in bar and "files" in bar, bar
    for n in range(2):
        _, page, _ = daemon.request("GET", f"/v1/sessions/tx-dir-{n}/observations")
        assert len(page["observations"]) == 4


def test_import_of_a_folder_without_transcripts_is_one_line_exit_1(daemon: Daemon, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = run_cli(daemon.data_dir, "import", "--agent", "claude", str(tmp_path / "empty"), "--url", daemon.url)
    assert done.returncode == 1 and "no .jsonl transcript files under" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
