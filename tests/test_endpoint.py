"""The endpoint record: serve says where it listens, every client of the data dir finds it there."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from conftest import REPO, Daemon, cli_env, free_port, run_cli
from wiki_helpers import wait_until as wait_for

SHELL_CLIENT = REPO / "hooks" / "ai-memory-hook"


def record(data_dir: Path) -> dict | None:
    try:
        return json.loads((data_dir / "daemon.json").read_text())
    except (OSError, ValueError):
        return None


def serve_any_port(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``serve`` with ``server.port = 0`` (a free port the system picks); returns the process
    and the URL it recorded."""
    data_dir.mkdir(parents=True, exist_ok=True)
    log = open(data_dir.parent / "daemon-any.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve"],
                            env={**cli_env(data_dir), "AI_MEMORY_PORT": "0"}, stdout=log, stderr=log, cwd=REPO)
    wait_for(lambda: record(data_dir) is not None or proc.poll() is not None)
    rec = record(data_dir)
    assert rec is not None, (data_dir.parent / "daemon-any.log").read_text()
    return proc, rec["url"]


def test_serve_on_any_port_records_where_and_removes_it_on_a_clean_exit(data_dir: Path) -> None:
    proc, url = serve_any_port(data_dir)
    try:
        rec = record(data_dir)
        assert rec == {"url": url, "pid": proc.pid, "started_at": rec["started_at"]}
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":0")
        assert (data_dir / "daemon.json").stat().st_mode & 0o777 == 0o600
        # no --url, no port anywhere: the CLI finds the daemon through the record
        status = run_cli(data_dir, "status", "--json")
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["data_dir"] == str(data_dir.resolve())
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    assert not (data_dir / "daemon.json").exists()
    stopped = run_cli(data_dir, "status")
    assert stopped.returncode == 1 and ":49374" in stopped.stderr  # back to the configured port


def test_a_stale_record_is_ignored_and_the_url_variable_still_wins(data_dir: Path) -> None:
    daemon = Daemon(data_dir).start()
    try:
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        (data_dir / "daemon.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": dead.pid,
                                                          "started_at": "x"}) + "\n")
        found = run_cli(data_dir, "status", AI_MEMORY_PORT=str(daemon.port))
        assert found.returncode == 0, found.stderr  # the dead daemon's record was not followed
        (data_dir / "daemon.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": os.getpid(),
                                                          "started_at": "x"}) + "\n")
        assert run_cli(data_dir, "status", AI_MEMORY_PORT=str(daemon.port)).returncode == 1  # a live record wins
        assert run_cli(data_dir, "status", AI_MEMORY_URL=daemon.url).returncode == 0  # and AI_MEMORY_URL over it
    finally:
        daemon.stop()


def test_events_of_both_hook_clients_reach_the_daemon_of_the_record(data_dir: Path) -> None:
    proc, url = serve_any_port(data_dir)
    token = (data_dir / "token").read_text().strip()
    try:
        for i, cmd in enumerate(([str(SHELL_CLIENT), "codex"],
                                 [sys.executable, "-m", "ai_memory.cli", "hook", "--agent", "codex"])):
            payload = {"session_id": "rec", "hook_event_name": "Stop", "last_assistant_message": f"reply {i}"}
            done = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True,
                                  env=cli_env(data_dir), timeout=30)
            assert done.returncode == 0 and done.stdout.strip() == "{}"
        import urllib.request

        def stored() -> int:
            req = urllib.request.Request(f"{url}/status", headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(req, timeout=5) as resp:
                return json.load(resp)["counts"]["observations"]

        # taken from the spool at once by the daemon that the record names (its watcher, not the 5 s drain)
        wait_for(lambda: stored() == 2 and not list((data_dir / "spool").glob("*.json")), timeout=4)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def post(url: str, token: str, path: str, body: dict) -> None:
    import urllib.request

    req = urllib.request.Request(f"{url}{path}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).close()


def test_the_shell_client_briefs_from_the_recorded_port(data_dir: Path, tmp_path: Path) -> None:
    proc, url = serve_any_port(data_dir)
    token = (data_dir / "token").read_text().strip()
    try:
        earlier = {"session_id": "earlier", "cwd": str(tmp_path)}
        post(url, token, "/hook?agent=claude", {**earlier, "hook_event_name": "UserPromptSubmit",
                                                "prompt": "Raise TOKEN_TTL to 15 minutes"})
        post(url, token, "/hook?agent=claude", {**earlier, "hook_event_name": "Stop", "last_assistant_message": "Done."})
        payload = {"session_id": "s", "hook_event_name": "SessionStart", "cwd": str(tmp_path), "source": "startup"}
        done = subprocess.run([str(SHELL_CLIENT), "--data-dir", str(data_dir), "claude", "SessionStart"],
                              input=json.dumps(payload), capture_output=True, text=True,
                              env=cli_env(tmp_path / "elsewhere"), timeout=30)
        assert done.returncode == 0
        assert "Raise TOKEN_TTL to 15 minutes" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def test_a_taken_port_is_one_line_and_exit_2(data_dir: Path) -> None:
    port = free_port()
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen(1)
        done = run_cli(data_dir, "serve", "--port", str(port))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert not (data_dir / "daemon.json").exists()
