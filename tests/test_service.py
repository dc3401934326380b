"""ai-memory service: the systemd user unit (and the launchd agent) that starts the daemon at login."""

from __future__ import annotations

import json
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ai_memory.core.service_unit import launchd_plist, systemd_unit
from conftest import REPO, run_cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the systemd half runs on Linux")


def service(data_dir: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(data_dir, "service", *args, HOME=str(home), XDG_CONFIG_HOME="")


def test_install_writes_a_unit_that_restarts_the_daemon_and_is_idempotent(tmp_path: Path) -> None:
    home, data_dir = tmp_path / "home", tmp_path / "my data"
    home.mkdir()
    first = service(data_dir, home, "install")
    assert first.returncode == 0, first.stderr
    unit = home / ".config" / "systemd" / "user" / "ai-memory.service"
    text = unit.read_text()
    assert f"wrote {unit}" in first.stdout
    assert "Restart=on-failure" in text and "WantedBy=default.target" in text
    [exec_start] = [line for line in text.splitlines() if line.startswith("ExecStart=")]
    assert f'serve --data-dir "{data_dir}"' in exec_start  # quoted: the path has a space
    assert exec_start.split()[0].removeprefix("ExecStart=") in (str(REPO / ".venv" / "bin" / "ai-memory"),
                                                                 str(Path(sys.executable).parent / "ai-memory"),
                                                                 sys.executable)
    if shutil.which("systemd-analyze"):
        verify = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
        assert verify.returncode == 0, verify.stderr
    second = service(data_dir, home, "install")
    assert second.returncode == 0 and f"unchanged {unit}" in second.stdout and unit.read_text() == text
    status = json.loads(service(data_dir, home, "status", "--json").stdout)
    assert status["installed"] is True and status["manager"] == "systemd" and status["path"] == str(unit)


def test_uninstall_leaves_nothing_behind(tmp_path: Path) -> None:
    home, data_dir = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    assert service(data_dir, home, "install").returncode == 0
    done = service(data_dir, home, "uninstall")
    assert done.returncode == 0 and "removed" in done.stdout
    assert [p for p in home.rglob("*") if p.is_file()] == []
    assert not (home / ".config" / "systemd").exists()
    again = service(data_dir, home, "uninstall")
    assert again.returncode == 0 and "absent" in again.stdout
    assert json.loads(service(data_dir, home, "status", "--json").stdout)["installed"] is False


def test_the_launchd_agent_runs_the_same_command_and_restarts_only_after_a_failure() -> None:
    doc = plistlib.loads(launchd_plist(["/opt/venv/bin/ai-memory"], "/Users/me/mem").encode())
    assert doc["ProgramArguments"] == ["/opt/venv/bin/ai-memory", "serve", "--data-dir", "/Users/me/mem"]
    assert doc["RunAtLoad"] is True and doc["KeepAlive"] == {"SuccessfulExit": False}
    assert doc["StandardErrorPath"] == "/Users/me/mem/logs/launchd.err.log"


def test_systemd_specifiers_in_a_path_are_escaped() -> None:
    text = systemd_unit(["/opt/v env/bin/python", "-m", "ai_memory.cli"], "/data/100%$HOME")
    assert 'ExecStart="/opt/v env/bin/python" -m ai_memory.cli serve --data-dir /data/100%%$$HOME' in text
    assert "Description=ai-memory daemon for /data/100%%$HOME" in text
