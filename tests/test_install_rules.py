"""install-rules / uninstall-rules: one delimited block in CLAUDE.md / AGENTS.md / GEMINI.md."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ai_memory.core.guidance import RULES_BEGIN, RULES_END, rules_block
from conftest import REPO, cli_env, settings_backups

USER_TEXT = "# Project notes\n\nRun `make test` before pushing.\n"


def cli(project: Path, *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ai_memory.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=cli_env(project.parent / "data"))


def install(project: Path, agent: str = "claude", *extra: str) -> subprocess.CompletedProcess[str]:
    done = cli(project, "install-rules", "--agent", agent, "--dir", str(project), *extra)
    assert done.returncode == 0, done.stderr
    return done


def uninstall(project: Path, agent: str = "claude", *extra: str) -> subprocess.CompletedProcess[str]:
    done = cli(project, "uninstall-rules", "--agent", agent, "--dir", str(project), *extra)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    return tmp_path / "proj"


def test_creates_the_file_and_a_second_run_is_byte_identical(project: Path) -> None:
    done = install(project)
    path = project / "CLAUDE.md"
    assert "created" in done.stdout and path.read_text() == rules_block()
    first = path.read_bytes()
    again = install(project)
    assert "unchanged" in again.stdout and path.read_bytes() == first and settings_backups(path, project.parent / "data") == []


@pytest.mark.parametrize("agent,name", [("codex", "AGENTS.md"), ("gemini", "GEMINI.md")])
def test_appends_to_the_users_file_and_uninstall_gives_it_back(project: Path, agent: str, name: str) -> None:
    path = project / name
    path.write_text(USER_TEXT)
    install(project, agent)
    text = path.read_text()
    assert text.startswith(USER_TEXT + "\n" + RULES_BEGIN) and text.endswith(RULES_END + "\n")
    assert [b.read_text() for b in settings_backups(path, project.parent / "data")] == [USER_TEXT]
    installed = path.read_bytes()
    install(project, agent)
    assert path.read_bytes() == installed
    done = uninstall(project, agent)
    assert "updated" in done.stdout and path.read_text() == USER_TEXT


def test_replaces_only_its_own_outdated_block(project: Path) -> None:
    path = project / "CLAUDE.md"
    old_block = "<!-- ai-memory:begin (an older wording) -->\nold guidance\n" + RULES_END + "\n"
    path.write_text(USER_TEXT + "\n" + old_block + "\n## After\n\nkeep me\n")
    install(project)
    assert path.read_text() == USER_TEXT + "\n" + rules_block() + "\n## After\n\nkeep me\n"
    uninstall(project)
    assert path.read_text() == USER_TEXT + "\n## After\n\nkeep me\n"


def test_uninstall_removes_a_file_that_held_only_the_block(project: Path) -> None:
    install(project, "gemini")
    done = uninstall(project, "gemini")
    assert "removed" in done.stdout and not (project / "GEMINI.md").exists()
    assert [b.read_text() for b in settings_backups(project / "GEMINI.md", project.parent / "data")] == [rules_block()]
    assert "absent" in uninstall(project, "gemini").stdout


def test_dry_run_prints_a_diff_and_writes_nothing(project: Path) -> None:
    done = install(project, "codex", "--dry-run")
    assert "+++ " in done.stdout and f"+{RULES_BEGIN}" in done.stdout and not (project / "AGENTS.md").exists()
    path = project / "AGENTS.md"
    path.write_text(USER_TEXT)
    install(project, "codex", "--dry-run")
    uninstall(project, "codex", "--dry-run")
    assert path.read_text() == USER_TEXT and settings_backups(path, project.parent / "data") == []
    install(project, "codex")
    done = uninstall(project, "codex", "--dry-run")
    assert f"-{RULES_END}" in done.stdout and RULES_BEGIN in path.read_text()


def test_default_dir_is_the_git_root_else_the_cwd(project: Path) -> None:
    (project / ".git").mkdir()
    (project / "src" / "deep").mkdir(parents=True)
    done = cli(project, "install-rules", "--agent", "claude", cwd=project / "src" / "deep")
    assert done.returncode == 0, done.stderr
    assert (project / "CLAUDE.md").exists() and not (project / "src" / "deep" / "CLAUDE.md").exists()
    plain = project.parent / "plain" / "sub"
    plain.mkdir(parents=True)
    done = cli(project, "install-rules", "--agent", "codex", cwd=plain)
    assert done.returncode == 0 and (plain / "AGENTS.md").read_text() == rules_block()


def test_crlf_files_keep_their_line_endings(project: Path) -> None:
    path = project / "CLAUDE.md"
    path.write_bytes(USER_TEXT.replace("\n", "\r\n").encode())
    install(project)
    data = path.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") and data.startswith(USER_TEXT.replace("\n", "\r\n").encode())
    uninstall(project)
    assert path.read_bytes() == USER_TEXT.replace("\n", "\r\n").encode()


def test_an_unpaired_marker_is_refused_and_the_file_left_alone(project: Path) -> None:
    path = project / "CLAUDE.md"
    broken = USER_TEXT + "\n" + RULES_BEGIN + "\nsomeone deleted the end marker\n\n## Mine\n"
    path.write_text(broken)
    for verb in ("install-rules", "uninstall-rules"):
        done = cli(project, verb, "--agent", "claude", "--dir", str(project))
        assert done.returncode == 2 and "unpaired ai-memory marker" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert path.read_text() == broken and settings_backups(path, project.parent / "data") == []


def test_usage_errors_exit_2(project: Path) -> None:
    assert cli(project, "install-rules").returncode == 2  # --agent is required
    assert cli(project, "install-rules", "--agent", "windsurf").returncode == 2
    missing = cli(project, "install-rules", "--agent", "claude", "--dir", str(project / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr
