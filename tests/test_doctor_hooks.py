"""``ai-memory doctor`` checks that installed hooks are live, not only present."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, Daemon, cli_env, run_cli


def doctor(data_dir: Path, home: Path) -> tuple[int, dict[str, dict]]:
    done = run_cli(data_dir, "doctor", "--json", HOME=str(home))
    report = json.loads(done.stdout)
    return done.returncode, {c["name"]: c for c in report["checks"]}


def problems(code: int, checks: dict[str, dict]) -> set[str]:
    return {name for name, c in checks.items() if not c["ok"] and not c["warning"] and not c["absent"]}


def install(data_dir: Path, home: Path, agent: str = "claude") -> None:
    done = run_cli(data_dir, "install-hooks", "--agent", agent, HOME=str(home))
    assert done.returncode == 0, done.stderr


def test_live_hooks_pass(daemon: Daemon, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    install(daemon.data_dir, home)
    code, checks = doctor(daemon.data_dir, home)
    hooks = checks["hooks:claude"]
    assert hooks["ok"] and "live" in hooks["detail"] and str(daemon.data_dir) in hooks["detail"], hooks
    assert checks["hooks:codex"]["absent"] and "hooks:codex" not in problems(code, checks)  # one agent is enough
    assert checks["service"]["warning"] and checks["service"]["fix"] == "run: ai-memory service install"


def test_hooks_whose_daemon_is_down_fail_with_the_command_to_start_it(data_dir: Path, tmp_path: Path) -> None:
    Daemon(data_dir).start().stop()
    home = tmp_path / "home"
    home.mkdir()
    install(data_dir, home)
    code, checks = doctor(data_dir, home)
    hooks = checks["hooks:claude"]
    assert code == 1 and not hooks["ok"] and "nothing answers" in hooks["detail"]
    assert hooks["fix"].startswith(f"run ai-memory serve --data-dir {data_dir}")


def test_hooks_whose_token_the_daemon_refuses_fail(daemon: Daemon, tmp_path: Path) -> None:
    """The hooks' data dir points (by its config) at a daemon that serves another data dir."""
    other = tmp_path / "other-data"
    other.mkdir()
    (other / "config.toml").write_text(f"[server]\nport = {daemon.port}\n")
    (other / "token").write_text("not-the-daemons-token\n")
    home = tmp_path / "home"
    home.mkdir()
    install(other, home)
    code, checks = doctor(daemon.data_dir, home)
    hooks = checks["hooks:claude"]
    assert code == 1 and not hooks["ok"] and "refuses the token" in hooks["detail"], hooks


def test_a_missing_hook_script_fails(daemon: Daemon, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    install(daemon.data_dir, home, agent="codex")
    (daemon.data_dir / "bin" / "ai-memory-hook").chmod(0o644)
    code, checks = doctor(daemon.data_dir, home)
    assert code == 1 and "not executable" in checks["hooks:codex"]["detail"]
    assert "install-hooks" in checks["hooks:codex"]["fix"]


def test_http_hooks_of_an_older_install_fail_with_the_reinstall(daemon: Daemon, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    http = {"type": "http", "url": f"{daemon.url}/hook?agent=claude&quiet=1",
            "headers": {"Authorization": "Bearer $AI_MEMORY_TOKEN"}, "allowedEnvVars": ["AI_MEMORY_TOKEN"]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [http]}]}}))
    code, checks = doctor(daemon.data_dir, home)
    hooks = checks["hooks:claude"]
    assert code == 1 and "http hooks" in hooks["detail"] and hooks["fix"] == "run: ai-memory install-hooks --agent claude"


def test_project_hooks_are_live_through_the_ai_memory_on_path(daemon: Daemon, tmp_path: Path) -> None:
    """A project's hooks run ``ai-memory`` by name for the default data dir: doctor, run in the
    project, finds the command on PATH and that data dir's daemon; without it on PATH, says so."""
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    done = run_cli(daemon.data_dir, "install-hooks", "--agent", "claude", "--scope", "project",
                   "--project-dir", str(project), HOME=str(home))
    assert done.returncode == 0, done.stderr
    venv_bin = Path(sys.executable).parent
    env = cli_env(daemon.data_dir, HOME=str(home), PATH=f"{venv_bin}{os.pathsep}/usr/bin:/bin", PYTHONPATH=str(REPO))

    def doctor_in_project() -> dict[str, dict]:
        run = subprocess.run([sys.executable, "-m", "ai_memory.cli", "doctor", "--json"], cwd=project, env=env,
                             capture_output=True, text=True, timeout=60)
        return {c["name"]: c for c in json.loads(run.stdout)["checks"]}

    hooks = doctor_in_project()["hooks:claude"]
    assert hooks["ok"] and "project" in hooks["detail"] and "live" in hooks["detail"], hooks
    assert f"{daemon.data_dir} via {venv_bin / 'ai-memory'}" in hooks["detail"]
    env["PATH"] = "/usr/bin:/bin"
    hooks = doctor_in_project()["hooks:claude"]
    assert not hooks["ok"] and "ai-memory is not on PATH" in hooks["detail"] and "install ai-memory" in hooks["fix"]
