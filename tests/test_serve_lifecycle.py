"""Start-up layout, config precedence, the single-daemon lock, clean shutdown, status CLI."""

from __future__ import annotations

import signal
from pathlib import Path

import pygit2
import pytest

from conftest import Daemon, free_port, run_cli


def test_first_start_lays_out_the_data_dir(daemon: Daemon) -> None:
    d = daemon.data_dir
    for name in ("config.toml", "token", "db/memory.sqlite", "raw", "spool", "logs", "models"):
        assert (d / name).exists(), name
    repo = pygit2.Repository(str(d / "wiki"))
    assert not repo.is_empty and repo.head.peel().message.startswith("ai-memory: initialize wiki")
    config = (d / "config.toml").read_text()
    assert "# port = 49374" in config and "# queue_size = 1024" in config
    assert any((d / "logs").glob("ai-memory.log*"))


def test_second_serve_on_same_data_dir_names_the_pid(daemon: Daemon) -> None:
    result = run_cli(daemon.data_dir, "serve", "--port", str(free_port()))
    assert result.returncode == 1
    assert f"pid {daemon.proc.pid}" in result.stderr


def test_sigterm_drains_and_exits_zero(daemon: Daemon) -> None:
    for i in range(50):
        daemon.post_hook({"session_id": "drain", "hook_event_name": "UserPromptSubmit", "prompt": str(i)})
    assert daemon.stop(signal.SIGTERM) == 0
    restarted = Daemon(daemon.data_dir).start()
    try:
        _, body, _ = restarted.request("GET", "/status")
        assert body["counts"]["observations"] == 50
    finally:
        restarted.stop()


def test_status_cli_against_running_and_stopped_daemon(daemon: Daemon) -> None:
    url = daemon.url
    ok = run_cli(daemon.data_dir, "status", "--url", url)
    assert ok.returncode == 0 and "observations: 0" in ok.stdout
    as_json = run_cli(daemon.data_dir, "status", "--json", "--url", url)
    assert '"queue_depth"' in as_json.stdout
    daemon.stop()
    down = run_cli(daemon.data_dir, "status", "--url", url)
    assert down.returncode == 1
    assert len(down.stderr.strip().splitlines()) == 1 and "not running" in down.stderr


def test_wrong_config_type_stops_startup_with_exit_2(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text('[server]\nport = "high"\n')
    result = run_cli(data_dir, "serve")
    assert result.returncode == 2
    assert "server.port" in result.stderr and "int" in result.stderr


def test_unknown_config_key_is_a_warning(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text('[server]\ncolour = "blue"\n')
    port = free_port()
    d = Daemon(data_dir, port=port).start()
    d.stop()
    log = (data_dir.parent / f"daemon-{port}.log").read_text()
    assert "unknown config key 'server.colour'" in log


def test_environment_and_flags_override_file(data_dir: Path) -> None:
    from ai_memory.config import load_config

    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text("[server]\nport = 1111\n[writer]\nqueue_size = 7\n")
    env = {"AI_MEMORY_SERVER_PORT": "2222", "AI_MEMORY_WRITER_MAX_BATCH": "9"}
    cfg = load_config(data_dir, {"server.port": 3333}, environ=env)
    assert cfg.port == 3333 and cfg.get("writer.queue_size") == 7 and cfg.get("writer.max_batch") == 9
    assert load_config(data_dir, environ=env).port == 2222
    assert load_config(data_dir, environ={}).port == 1111


@pytest.mark.parametrize(("host", "url"), [("0.0.0.0", "http://127.0.0.1:4444"), ("::", "http://127.0.0.1:4444"),
                                           ("127.0.0.2", "http://127.0.0.2:4444"), ("::1", "http://[::1]:4444"),
                                           ("[::]", "http://127.0.0.1:4444"), ("[::1]", "http://[::1]:4444")])
def test_clients_find_the_daemon_at_its_bound_host(tmp_path: Path, host: str, url: str) -> None:
    """A wildcard bind is reached on loopback; an IPv6 address goes in brackets."""
    from ai_memory.config import load_config

    assert load_config(tmp_path, environ={"AI_MEMORY_HOST": host, "AI_MEMORY_PORT": "4444"}).url == url
