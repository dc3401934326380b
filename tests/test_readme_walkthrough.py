"""The README's walk-through, run exactly as written, in a sandboxed HOME on a free port, from
the checkout (tests/test_wheel.py runs it from an installed wheel)."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, cli_env, free_port
from walkthrough import walk


def test_the_readme_walkthrough_runs_as_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    data_dir = home / ".local" / "share" / "ai-memory"  # the default data dir under this HOME
    walk(home, data_dir, cli_env(data_dir, HOME=str(home), AI_MEMORY_PORT=str(free_port())), REPO)
