"""Installed as a tool: a wheel built from the checkout, in a fresh venv, run from outside the
checkout, serves, installs hooks pointing at a script that exists, takes a hook event, and runs
the README's walk-through. (All in one module: a parallel run gives a module to one worker, so
no other worker sits waiting for the install.)"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
from pathlib import Path

from conftest import REPO, Installed, free_port, installed_env
from walkthrough import walk
from wiki_helpers import wait_until


def test_the_wheel_carries_the_package_data(installed: Installed) -> None:
    from wheel_install import wheel_members

    members = wheel_members(installed.wheel)
    assert {"ai_memory/data_template/config.toml", "ai_memory/hooks/ai-memory-hook", "ai_memory/hooks/opencode-plugin.js",
            "ai_memory/py.typed"} <= members
    ui = REPO / "ai_memory" / "server" / "ui"
    assets = {str(path.relative_to(REPO)) for folder in ("templates", "static") for path in (ui / folder).iterdir()}
    assert assets <= members, f"the web view's {sorted(assets - members)[:3]} are not in the wheel"
    assert not any(m.startswith(("tests/", "benchmarks/")) for m in members)
    modules = {str(path.relative_to(REPO)) for path in (REPO / "ai_memory").rglob("*.py")}
    assert modules <= members, f"add {sorted(modules - members)[:3]}'s package to pyproject.toml"


def _health(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def _observations(port: int, token: str, session: str) -> list[dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", f"/v1/sessions/{session}/observations", headers={"Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        body = json.loads(resp.read() or b"{}")
        return body.get("observations", []) if resp.status == 200 else []
    finally:
        conn.close()


def _embeddings(port: int, token: str) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/status", headers={"Authorization": f"Bearer {token}"})
        return json.loads(conn.getresponse().read() or b"{}").get("embeddings", {})
    finally:
        conn.close()


def test_the_installed_tool_serves_installs_hooks_and_takes_an_event(installed: Installed, tmp_path: Path) -> None:
    home, data_dir, port = tmp_path / "home", tmp_path / "data", free_port()
    home.mkdir()
    env = installed_env(data_dir, installed, HOME=str(home), AI_MEMORY_PORT=str(port), AI_MEMORY_EMBED_ENABLED="1")
    tool = str(installed.bin / "ai-memory")

    def run(*args: str, **kw) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, **kw)

    where = run(str(installed.bin / "python"), "-c", "import ai_memory; print(ai_memory.__file__)").stdout
    assert where.startswith(str(installed.venv)) and str(REPO) not in where  # no checkout involved

    log = open(tmp_path / "serve.log", "wb")
    daemon = subprocess.Popen([tool, "serve"], env=env, cwd=tmp_path, stdout=log, stderr=log)
    try:
        wait_until(lambda: _health(port) or daemon.poll() is not None, timeout=60)
        assert daemon.poll() is None, (tmp_path / "serve.log").read_text()
        packaged = (REPO / "data_template" / "config.toml").read_text()
        assert (data_dir / "config.toml").read_text() == packaged  # from the package data

        dry = run(tool, "install-hooks", "--agent", "claude", "--dry-run")
        assert dry.returncode == 0 and f"{data_dir}/bin/ai-memory-hook --data-dir {data_dir} claude SessionStart" in dry.stdout, dry
        assert not (home / ".claude").exists()

        done = run(tool, "install-hooks", "--agent", "codex")
        assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
        doc = json.loads((home / ".codex" / "hooks.json").read_text())
        [handler] = doc["hooks"]["UserPromptSubmit"][0]["hooks"]
        script = data_dir / "bin" / "ai-memory-hook"
        assert str(script) in handler["command"] and os.access(script, os.X_OK)

        # one event, as Codex runs the hook: the command through sh, the payload on stdin
        payload = {"session_id": "wheel-1", "hook_event_name": "UserPromptSubmit", "cwd": str(tmp_path),
                   "prompt": "installed from a wheel"}
        hook = run("sh", "-c", handler["command"], input=json.dumps(payload))
        assert hook.returncode == 0 and hook.stdout.strip() == "{}", hook
        token = (data_dir / "token").read_text().strip()
        wait_until(lambda: len(_observations(port, token, "wheel-1")) == 1, timeout=30)
        # the model runs without torch, which is not in the tool's venv at all
        wait_until(lambda: _embeddings(port, token).get("ready"), timeout=60)
        assert _embeddings(port, token)["precision"] in ("float32", "bfloat16")
        missing = run(str(installed.bin / "python"), "-c", "import torch")
        assert missing.returncode != 0 and "No module named 'torch'" in missing.stderr
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0


def test_the_walkthrough_runs_from_an_installed_wheel(tmp_path: Path, installed: Installed) -> None:
    """The same lines in a folder whose .venv is the wheel's venv: ai-memory, its hook script and
    its data template all come from the installed package."""
    home, place = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    place.mkdir()
    (place / ".venv").symlink_to(installed.venv)
    data_dir = home / ".local" / "share" / "ai-memory"
    env = installed_env(data_dir, installed, HOME=str(home), AI_MEMORY_PORT=str(free_port()))
    walk(home, data_dir, env, place)
    command = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]
    assert str(data_dir / "bin" / "ai-memory-hook") in command["command"]
    assert (data_dir / "bin" / "ai-memory-hook").is_file()
