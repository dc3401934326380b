"""A wheel built from the checkout, installed into a fresh virtual environment: what a user of
`pip install`, pipx or `uv tool install` gets, with no checkout on the path.

Built and installed once per test run (about two minutes, most of it installing the
dependencies), then shared by the tests that use it.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import REPO

TORCH = "torch==2.13.0"  # the CPU wheel on this machine's disk (see the Makefile); first, so pip keeps it


def build_wheel(out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = out.glob("ai_memory-*.whl")
    return wheel


def wheel_members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def install(wheel: Path, venv: Path) -> Path:
    """A fresh venv holding torch and the wheel (with its dependencies); its bin/ folder."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, TORCH], check=True, capture_output=True, timeout=900)
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True, timeout=900)
    return venv / "bin"
