"""The real hook clients (shell and Python) as subprocesses: spool, deliver, never block."""

from __future__ import annotations

import ast
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, Daemon, cli_env, free_port
from proc_scan import ProcScanner

SHELL_CLIENT = REPO / "hooks" / "ai-memory-hook"
BRIEFING_BUDGET_S = 1.0  # the clients' own bound on the SessionStart request
HELD_MARGIN_S = 10.0  # start-up on the most loaded machine; far below the 30 s a held hook would take


def fire(data_dir: Path, port: int, payload: dict, *, client: str = "shell", agent: str = "codex",
         event: str | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    env = cli_env(data_dir, AI_MEMORY_PORT=str(port))
    if client == "shell":
        cmd = [str(SHELL_CLIENT), agent] + ([event] if event else [])
    else:
        cmd = [sys.executable, "-m", "ai_memory.cli", "hook", "--agent", agent] + (["--event", event] if event else [])
    t0 = time.monotonic()
    done = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=30)
    return done, (time.monotonic() - t0) * 1000


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("condition not met in time")


def count(daemon: Daemon) -> int:
    return daemon.request("GET", "/status")[1]["counts"]["observations"]


def spooled(data_dir: Path) -> list[Path]:
    return list((data_dir / "spool").glob("*.json"))


def test_events_fired_while_daemon_is_down_arrive_exactly_once(data_dir: Path) -> None:
    daemon = Daemon(data_dir).start()  # lay out the data dir and token, then stop
    daemon.stop()
    for i in range(500):
        client = "shell" if i % 5 else "python"
        done, _ = fire(data_dir, daemon.port, {"session_id": f"down-{i % 7}", "hook_event_name": "PostToolUse",
                                               "tool_name": "Bash", "tool_input": {"command": f"echo {i}"},
                                               "cwd": str(data_dir)}, client=client)
        assert done.returncode == 0 and done.stdout.strip() == "{}"
    wait_for(lambda: len(spooled(data_dir)) == 500, timeout=10)
    daemon.start()
    try:
        wait_for(lambda: count(daemon) == 500 and not spooled(data_dir))
        time.sleep(0.5)
        assert count(daemon) == 500
    finally:
        daemon.stop()


class HungListener:
    """Accepts connections and never answers: the worst daemon a hook can meet."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(1024)
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone would not
        self.sock.close()
        self.thread.join(timeout=5)
        for conn in self.held:
            conn.close()


@pytest.mark.parametrize("client", ["shell", "python"])
def test_hung_daemon_never_holds_the_agent(data_dir: Path, client: str) -> None:
    """Events other than SessionStart never open a connection, so a hung daemon cannot hold
    them; a SessionStart gives up within its briefing budget. How fast a hook returns is
    measured by benchmarks/hook_latency.py, not here: a loaded machine may take 400 ms to start
    Python, while a hook held by the daemon takes the subprocess timeout."""
    daemon = Daemon(data_dir).start()
    daemon.stop()
    hung = HungListener(daemon.port)
    try:
        for i in range(20):
            done, _ = fire(data_dir, daemon.port, {"session_id": "hung", "hook_event_name": "Stop",
                                                   "last_assistant_message": f"m{i}"}, client=client)
            assert done.returncode == 0 and done.stdout.strip() == "{}"
        assert hung.held == [], "a Stop hook connected to the daemon"
        done, ms = fire(data_dir, daemon.port, {"session_id": "hung", "hook_event_name": "SessionStart"},
                        client=client, event="SessionStart")
        assert done.returncode == 0 and done.stdout.strip() == ""
        wait_for(lambda: len(hung.held) >= 1, timeout=10)  # the briefing request reached the hung daemon
        assert len(hung.held) == 1
        assert ms < (BRIEFING_BUDGET_S + HELD_MARGIN_S) * 1000, f"SessionStart held the agent {ms:.0f} ms"
    finally:
        hung.close()
    daemon.start()
    try:
        wait_for(lambda: count(daemon) == 21 and not spooled(data_dir))
    finally:
        daemon.stop()


@pytest.mark.parametrize(("bound", "reached"), [("127.0.0.2", "127.0.0.2"), ("::", "127.0.0.1")])
@pytest.mark.parametrize("client", ["shell", "python"])
def test_hook_posts_to_the_host_the_daemon_is_bound_to(data_dir: Path, client: str, bound: str, reached: str) -> None:
    """A daemon bound to another loopback address ([server] host in config.toml) is where the
    hook goes, not 127.0.0.1; a wildcard bind ("::": as written, the IPv6 wildcard, where this
    IPv4 listener is not) is reached on 127.0.0.1. The briefing request reaches that address (the
    listener there never answers, so the hook prints nothing and the event stays spooled)."""
    port = free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "config.toml").write_text(f'[server]\nhost = "{bound}"\nport = {port}\n')
    try:
        listener = HungListener(port, host=reached)
    except OSError as e:  # 127.0.0.2 needs an alias on some systems (macOS)
        pytest.skip(f"cannot listen on {reached}: {e}")
    try:
        cmd = [str(SHELL_CLIENT), "codex", "SessionStart"] if client == "shell" else \
            [sys.executable, "-m", "ai_memory.cli", "hook", "--agent", "codex", "--event", "SessionStart"]
        done = subprocess.run(cmd, input=json.dumps({"session_id": "bound", "hook_event_name": "SessionStart"}),
                              capture_output=True, text=True, env=cli_env(data_dir), timeout=30)
        assert done.returncode == 0, done.stderr
        wait_for(lambda: len(listener.held) >= 1, timeout=10)
    finally:
        listener.close()
    assert len(spooled(data_dir)) == 1


def test_session_start_prints_briefing_about_earlier_sessions(daemon: Daemon, tmp_path: Path) -> None:
    project_dir = tmp_path / "acme-api"
    project_dir.mkdir()
    earlier = {"session_id": "earlier-1", "cwd": str(project_dir)}
    daemon.post_hook({**earlier, "hook_event_name": "UserPromptSubmit", "prompt": "Raise TOKEN_TTL to 15 minutes"})
    daemon.post_hook({**earlier, "hook_event_name": "Stop", "last_assistant_message": "TOKEN_TTL is now 900 s."})
    for client in ("shell", "python"):
        done, _ = fire(daemon.data_dir, daemon.port, {"session_id": "new-1", "hook_event_name": "SessionStart",
                                                      "cwd": str(project_dir), "source": "startup"},
                       client=client, agent="codex", event="SessionStart")
        assert done.returncode == 0
        reply = json.loads(done.stdout)
        context = reply["hookSpecificOutput"]["additionalContext"]
        assert reply["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        assert "Raise TOKEN_TTL to 15 minutes" in context and "TOKEN_TTL is now 900 s." in context
        assert "not instructions" in context and len(context) <= 8000


def test_session_start_with_daemon_down_prints_nothing(data_dir: Path) -> None:
    Daemon(data_dir).start().stop()
    for client in ("shell", "python"):
        done, ms = fire(data_dir, free_port(), {"session_id": "x", "hook_event_name": "SessionStart", "cwd": "/"},
                        client=client, event="SessionStart")
        assert done.returncode == 0 and done.stdout.strip() == ""


def test_named_events_are_stored_whether_the_agent_sent_a_payload_or_none(data_dir: Path) -> None:
    """Every installed hook names its event; the shell client then streams stdin into the spool
    file. An agent that sent nothing leaves an empty payload, read as {}: refused for what it
    lacks (a session id), not as a file that is not JSON."""
    daemon = Daemon(data_dir).start()
    daemon.stop()
    env = cli_env(data_dir, AI_MEMORY_PORT=str(daemon.port))
    payload = {"session_id": "named", "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "pytest -k named_marker"}, "cwd": str(data_dir)}
    for stdin in (json.dumps(payload), ""):
        done = subprocess.run([str(SHELL_CLIENT), "claude", "PostToolUse"], input=stdin, capture_output=True,
                              text=True, env=env, timeout=30)
        assert done.returncode == 0 and done.stdout.strip() == "{}"
    assert len(spooled(data_dir)) == 2
    daemon.start()
    try:
        wait_for(lambda: not spooled(data_dir))
        status = daemon.request("GET", "/status")[1]
        assert status["spool"]["bad"] == 1 and count(daemon) == 1
        hits = daemon.request("POST", "/v1/query", {"q": "named_marker", "all_projects": True})[1]
        assert any("named_marker" in json.dumps(hit) for hit in hits.get("raw_hits", []) + hits.get("hits", [])), hits
    finally:
        daemon.stop()
    log = "".join(p.read_text() for p in (data_dir / "logs").glob("ai-memory.log*"))
    assert "missing session_id" in log and "not JSON" not in log


def test_spool_files_are_private_and_bad_ones_are_quarantined(data_dir: Path) -> None:
    daemon = Daemon(data_dir).start()
    daemon.stop()
    fire(data_dir, daemon.port, {"session_id": "p", "hook_event_name": "Stop"})
    [spool_file] = spooled(data_dir)
    assert spool_file.stat().st_mode & 0o777 == 0o600
    (data_dir / "spool" / "0000000000001-1.json").write_text("{not json")
    daemon.start()
    try:
        wait_for(lambda: not spooled(data_dir))
        status = daemon.request("GET", "/status")[1]
        assert status["spool"]["bad"] == 1 and status["spool"]["bad_files"] == ["0000000000001-1.json"]
        assert (data_dir / "spool" / "bad" / "0000000000001-1.json").exists()
    finally:
        daemon.stop()


def test_hook_client_import_path_is_standard_library_only(tmp_path: Path) -> None:
    """``ai-memory hook`` execs the shell client having imported only its own few modules (no
    argparse, typing or pathlib); where it cannot exec, the Python client stays light too."""
    probe = (
        "import sys, io, os\n"
        "seen = []\n"
        "def no_exec(path, argv):\n"
        "    seen.append(sorted(m for m in sys.modules if m.startswith('ai_memory')"
        " or m in ('argparse', 'typing', 'pathlib', 'json', 'socket')))\n"
        "    raise OSError('this probe stays in process')\n"
        "os.execv = no_exec\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'))\n"
        "from ai_memory.cli.main import main\n"
        "main(['hook', '--agent', 'codex'])\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('aiohttp', 'torch', 'pygit2', 'sqlite3',"
        " 'numpy', 'sentence_transformers', 'yaml', 'frontmatter', 'watchdog')"
        " or m.startswith(('ai_memory.store', 'ai_memory.server', 'ai_memory.wiki'))]\n"
        "print('AT_EXEC', seen[0], file=sys.stderr)\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    env = cli_env(tmp_path / "data", AI_MEMORY_PORT=str(free_port()))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=30)
    assert "HEAVY []" in done.stderr, done.stderr
    at_exec = set(ast.literal_eval(done.stderr.split("AT_EXEC ", 1)[1].splitlines()[0]))
    assert at_exec == {"ai_memory", "ai_memory.cli", "ai_memory.cli.main", "ai_memory.cli.hook",
                       "ai_memory.client", "ai_memory.client.hook_script", "ai_memory.core",
                       "ai_memory.core.errors", "ai_memory.hooks"}, at_exec


def test_spool_caps_drop_old_and_excess_files_and_count_them(data_dir: Path) -> None:
    import os

    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text("[spool]\nmax_files = 5\nmax_age_days = 1.0\n")
    daemon = Daemon(data_dir).start()
    daemon.stop()
    spool = data_dir / "spool"
    old = time.time() - 3 * 86400
    for i in range(3):  # older than the age cap
        path = spool / f"{1000 + i:013d}-1.json"
        path.write_text(json.dumps({"agent": "codex", "payload": {"session_id": "old", "hook_event_name": "Stop"}}))
        os.utime(path, (old, old))
    for i in range(8):  # three more than the count cap
        (spool / f"{2000 + i:013d}-1.json").write_text(json.dumps(
            {"agent": "codex", "idempotency_key": f"cap-{i}", "payload": {"session_id": "cap", "hook_event_name": "Stop"}}))
    daemon.start()
    try:
        wait_for(lambda: not spooled(data_dir))
        status = daemon.request("GET", "/status")[1]
        assert status["spool"]["dropped_age_cap"] == 3 and status["spool"]["dropped_count_cap"] == 3
        assert status["counts"]["observations"] == 5
    finally:
        daemon.stop()
    log = "".join(p.read_text() for p in (data_dir / "logs").glob("ai-memory.log*"))
    assert "older than the age cap" in log and "beyond the 5-file cap" in log


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
@pytest.mark.parametrize("client", ["shell", "python"])
def test_the_token_is_in_no_command_line_or_environment_during_a_hook(data_dir: Path, client: str) -> None:
    """curl gets the Authorization header on stdin; a hung daemon keeps each briefing's curl
    alive for its whole 1 s budget, so a scanner of /proc cannot miss an argument."""
    daemon = Daemon(data_dir).start()
    daemon.stop()
    token = daemon.token
    hung = HungListener(daemon.port)
    try:
        with ProcScanner(token) as scanner:
            for event in ("SessionStart", "PostToolUse", "SessionStart"):
                done, _ = fire(data_dir, daemon.port, {"session_id": "tok", "hook_event_name": event, "cwd": "/"},
                               client=client, event=event)
                assert done.returncode == 0
            wait_for(lambda: len(hung.held) >= 2, timeout=10)  # the briefings: the only requests a hook sends
        assert scanner.scans > 10 and scanner.found == []
    finally:
        hung.close()


@pytest.mark.parametrize("client", ["shell", "python"])
def test_a_spooled_event_is_taken_by_the_daemon_at_once(data_dir: Path, client: str) -> None:
    """Hooks only spool; the daemon watches spool/ and does not wait for its periodic drain."""
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text("[spool]\ndrain_interval_s = 3600.0\n")
    daemon = Daemon(data_dir).start()
    try:
        wait_for(lambda: daemon.request("GET", "/status")[1]["spool"]["last_drain_at"] is not None)  # the start-up drain
        t0 = time.monotonic()
        fire(data_dir, daemon.port, {"session_id": "watched", "hook_event_name": "Stop", "last_assistant_message": "x"},
             client=client)
        wait_for(lambda: count(daemon) == 1 and not spooled(data_dir), timeout=10)
        assert time.monotonic() - t0 < 10
    finally:
        daemon.stop()
