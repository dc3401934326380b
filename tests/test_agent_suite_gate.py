"""The real-agent suite skips only with a reason, and only where it is not required (.ci/run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import REPO

GATE = REPO / ".ci" / "agents_ran.py"


def run_suite(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """tests/agents where npm cannot be found and nothing is cached: the CLIs cannot be had."""
    base = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/agents"],
                          capture_output=True, text=True, cwd=REPO, env={**base, **env}, timeout=300)


def test_without_npm_the_suite_is_skipped_with_the_reason(tmp_path: Path) -> None:
    done = run_suite(tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "real-agent suite skipped: node and npm are not installed" in done.stdout


def test_where_the_suite_is_required_a_skip_fails(tmp_path: Path) -> None:
    done = run_suite(tmp_path, AI_MEMORY_REQUIRE_AGENTS="1")
    assert done.returncode == 1 and "the real-agent suite is required here" in done.stdout


def report(tmp_path: Path, cases: str) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
    return path


def test_the_ci_gate_needs_the_agent_tests_passed_in_the_report(tmp_path: Path) -> None:
    agents = ("claude", "codex", "gemini", "opencode", "copilot", "qwen", "cline")
    case = '<testcase classname="tests.agents.test_real_agents" name="t{i}[{agent}]"/>'
    passed = "".join(case.format(i=i, agent=agent) for agent in agents for i in range(6))
    one_short = "".join(case.format(i=i, agent=agent) for agent in agents for i in range(6 if agent != "cline" else 5))
    skipped = '<testcase classname="tests.agents.test_real_agents" name="s"><skipped message="x"/></testcase>'
    other = "".join(f'<testcase classname="tests.test_cli" name="c{i}"/>' for i in range(30))
    gate = lambda cases: subprocess.run([sys.executable, str(GATE), str(report(tmp_path, cases))],  # noqa: E731
                                        capture_output=True, text=True, timeout=60)
    assert gate(passed).returncode == 0
    assert gate(passed + skipped).returncode == 1
    assert gate(other).returncode == 1
    assert gate(one_short + case.format(i=9, agent="claude")).returncode == 1  # every agent ran, each in full
