"""The real agent CLIs, at pinned versions, installed from the npm registry into a cache.

Each CLI is installed once into ``$XDG_CACHE_HOME/ai-memory/agents/<name>-<version>`` (default
``~/.cache``), outside the repository, and reused by every later run; an ``flock`` keeps two
suites from installing the same one at once, and an install goes to a temporary directory
renamed into place, so a half-installed CLI is never used. Without node and npm the suite is
skipped with a message saying so, unless ``AI_MEMORY_REQUIRE_AGENTS=1`` (what ``.ci/run`` sets
on a machine that has npm), which turns every such skip into a failure.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REQUIRE_ENV = "AI_MEMORY_REQUIRE_AGENTS"
INSTALL_TIMEOUT_S = 900


@dataclass(frozen=True)
class Cli:
    name: str  # claude, codex, gemini, ...
    package: str
    version: str
    binary: str

    @property
    def home(self) -> Path:
        return cache_root() / f"{self.package.rsplit('/', 1)[-1]}-{self.version}"

    @property
    def path(self) -> Path:
        return self.home / "node_modules" / ".bin" / self.binary


PINNED = {
    "claude": Cli("claude", "@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": Cli("codex", "@openai/codex", "0.169.0", "codex"),
    "gemini": Cli("gemini", "@google/gemini-cli", "0.61.0", "gemini"),
    "opencode": Cli("opencode", "opencode-ai", "1.18.33", "opencode"),
    "copilot": Cli("copilot", "@github/copilot", "1.0.102", "copilot"),
    "qwen": Cli("qwen", "@qwen-code/qwen-code", "0.24.4", "qwen"),
    "cline": Cli("cline", "cline", "3.0.65", "cline"),
}


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ai-memory" / "agents"


class CliUnavailable(Exception):
    """The CLI cannot be had here (no node/npm, or the install failed); the message says why."""


def ensure_or_skip(cli: Cli) -> Path:
    """``ensure`` for the test suite: skip with the reason, or fail where the suite is required."""
    import pytest

    try:
        return ensure(cli)
    except CliUnavailable as exc:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"the real-agent suite is required here ({REQUIRE_ENV}=1) but {exc}", pytrace=False)
        pytest.skip(f"real-agent suite skipped: {exc}")


def ensure(cli: Cli) -> Path:
    """The CLI's executable, installing it into the cache first if it is not there."""
    if cli.path.exists():
        return cli.path
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise CliUnavailable("node and npm are not installed (the CLIs come from the npm registry)")
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if cli.path.exists():  # another suite installed it while we waited
            return cli.path
        staging = root / f".{cli.home.name}.installing"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--loglevel=error",
                 f"{cli.package}@{cli.version}"],
                capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise CliUnavailable(f"npm install {cli.package}@{cli.version} failed: {exc}") from exc
        if done.returncode != 0 or not (staging / "node_modules" / ".bin" / cli.binary).exists():
            shutil.rmtree(staging, ignore_errors=True)
            raise CliUnavailable(f"npm install {cli.package}@{cli.version} failed: {done.stderr.strip()[-500:]}")
        os.replace(staging, cli.home)
    return cli.path


def version_of(path: Path) -> str:
    done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=120)
    return done.stdout.strip()
