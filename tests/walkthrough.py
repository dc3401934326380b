"""The README's walk-through, run exactly as written in a sandboxed HOME: the block between
its walkthrough markers, and what a user must see when it has run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

from conftest import REPO

BLOCK = re.compile(r"<!-- walkthrough:begin -->\n```sh\n(.*?)```\n<!-- walkthrough:end -->", re.S)


def walkthrough() -> str:
    match = BLOCK.search((REPO / "README.md").read_text())
    assert match, "README.md has no walk-through block"
    return match.group(1)


def walk(home: Path, data_dir: Path, env: dict[str, str], cwd: Path) -> None:
    for key in ("AI_MEMORY_DATA_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_PROJECT_DIR"):
        env.pop(key, None)
    try:
        done = subprocess.run(["bash", "-e", "-c", walkthrough()], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=240)
    finally:
        _stop_leftover_daemon(data_dir)
    out = done.stdout
    assert done.returncode == 0, f"stdout:\n{out}\nstderr:\n{done.stderr}\nlog:\n{_log(home)}"
    first_hit = re.search(r"^\s*1\. (.*)$", out, re.M)
    assert first_hit and "billing webhook" in first_hit.group(1).lower(), out
    briefing = next(json.loads(line) for line in out.splitlines() if "hookSpecificOutput" in line)
    context = briefing["hookSpecificOutput"]["additionalContext"]
    assert "Handoff from claude" in context and "add a test for the backoff schedule" in context
    assert re.search(r"^\S+\s+accepted\s+auto\s+.*claude$", out, re.M), out  # handoff list --state accepted
    project = home / "code" / "acme-api"
    assert "ai-memory:begin" in (project / "CLAUDE.md").read_text()
    assert "ai-memory" in json.loads((home / ".claude.json").read_text())["mcpServers"]
    assert "hooks" in json.loads((home / ".claude" / "settings.json").read_text())


def _stop_leftover_daemon(data_dir: Path) -> None:
    """`kill %1` ends the walk-through; if it failed early, the daemon must not outlive the test."""
    lock = data_dir / "serve.lock"
    try:
        pid = int(lock.read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        pass


def _log(home: Path) -> str:
    log = home / "ai-memory.log"
    return log.read_text()[-3000:] if log.exists() else "(no log)"
