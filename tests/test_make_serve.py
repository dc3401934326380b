"""After `make serve`, the next command a newcomer types works: the serve target prints the line
that puts the CLI on PATH, and that line, pasted into a shell, finds `ai-memory`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_serve_prints_a_path_line_that_finds_the_cli() -> None:
    planned = subprocess.run(["make", "-n", "serve"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert planned.returncode == 0, planned.stderr
    printed = subprocess.run(["bash", "-c", "\n".join(line for line in planned.stdout.splitlines()
                                                      if line.startswith("echo "))],
                             cwd=REPO, capture_output=True, text=True, timeout=60).stdout
    export = next(line.strip() for line in printed.splitlines() if "export PATH=" in line)
    pasted = subprocess.run(["bash", "-c", export.split(";")[0] + "; command -v ai-memory"], cwd="/",
                            capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert pasted.stdout.strip() == str(REPO / ".venv" / "bin" / "ai-memory"), (printed, pasted.stderr)
