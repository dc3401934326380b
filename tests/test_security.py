"""Tokenless, foreign-Origin, wrong-Host requests and remote binds are refused."""

from __future__ import annotations

from pathlib import Path

from conftest import Daemon, free_port, run_cli

EVENT = {"session_id": "sec", "hook_event_name": "UserPromptSubmit", "prompt": "x"}


def test_health_needs_no_token(daemon: Daemon) -> None:
    status, body, _ = daemon.request("GET", "/health", auth=False)
    assert status == 200 and body["ok"] is True


def test_tokenless_and_wrong_token_get_401(daemon: Daemon) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": daemon.token}):
        status, body, _ = daemon.request("POST", "/hook?agent=claude", EVENT, headers=headers, auth=False)
        assert status == 401, headers
        assert body["error"] == "missing or wrong token"
    status, _, _ = daemon.request("GET", "/status", auth=False)
    assert status == 401


def test_foreign_origin_gets_403_even_with_token(daemon: Daemon) -> None:
    status, body, _ = daemon.request("POST", "/hook?agent=claude", EVENT, headers={"Origin": "https://evil.example"})
    assert status == 403 and body["error"] == "origin not allowed"
    _, page, _ = daemon.request("GET", "/status")
    assert page["counts"]["observations"] == 0


def test_rebinding_host_gets_403(daemon: Daemon) -> None:
    status, body, _ = daemon.request("GET", "/status", headers={"Host": f"attacker.example:{daemon.port}"})
    assert status == 403 and body["error"] == "host not allowed"
    status, _, _ = daemon.request("GET", "/status", headers={"Host": f"localhost:{daemon.port}"})
    assert status == 200


def test_allowed_origin_passes(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text('[server]\nallowed_origins = ["http://localhost:3000"]\n')
    d = Daemon(data_dir).start()
    try:
        status, _, _ = d.request("GET", "/status", headers={"Origin": "http://localhost:3000"})
        assert status == 200
    finally:
        d.stop()


def test_non_loopback_bind_is_refused_without_allow_remote(data_dir: Path) -> None:
    result = run_cli(data_dir, "serve", "--host", "0.0.0.0", "--port", str(free_port()))
    assert result.returncode == 2
    assert "not a loopback address" in result.stderr and "--allow-remote" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_token_file_is_private(daemon: Daemon) -> None:
    assert (daemon.data_dir / "token").stat().st_mode & 0o777 == 0o600
    for sub in ("wiki", "db", "raw", "spool", "logs", "models"):
        assert (daemon.data_dir / sub).stat().st_mode & 0o777 == 0o700
