"""The command line's manners: a verb's own usage on its errors, the closest verb suggested, a
closed pipe ending quietly, and completion scripts generated from the parser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, Daemon, cli_env, run_cli


def test_an_unknown_option_shows_the_verbs_own_usage(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "data", "search", "--kk", "3", "foo")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: ai-memory search "), done.stderr
    assert done.stderr.strip().splitlines()[-1] == "ai-memory: error: unrecognized arguments: --kk foo"


def test_a_sub_verbs_unknown_option_shows_the_sub_verbs_usage(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "data", "handoff", "list", "--zz", "open")
    assert done.returncode == 2 and done.stderr.startswith("usage: ai-memory handoff list "), done.stderr


@pytest.mark.parametrize("argv, suggestion", [
    (("serch", "x"), "did you mean 'search'?"),
    (("handoff", "lsit"), "did you mean 'list'?"),
    (("install-hooks", "--agent", "clade"), "did you mean 'claude'?"),
])
def test_a_misspelt_choice_gets_the_closest_one(tmp_path: Path, argv: tuple[str, ...], suggestion: str) -> None:
    done = run_cli(tmp_path / "data", *argv)
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ai-memory: error: ") and last.endswith(suggestion), done.stderr
    assert "choose from" not in last  # one line, not the list of thirty verbs


def test_a_choice_with_nothing_close_lists_the_choices(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "data", "completions", "powershell")
    assert done.returncode == 2 and "unknown 'powershell' (choose from bash, zsh, fish)" in done.stderr


def _into_closed_pipe(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """Run the CLI with stdout on a pipe whose reader is already gone: every write fails with
    EPIPE, as when `| head -2` has read its lines, without depending on who runs first."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "ai_memory.cli", *args], stdout=write_end,
                              stderr=subprocess.PIPE, env=cli_env(data_dir, **env), cwd=REPO, timeout=60)
    finally:
        os.close(write_end)


def test_a_closed_pipe_ends_quietly_with_status_0(tmp_path: Path) -> None:
    done = _into_closed_pipe(tmp_path / "data", "completions", "bash")
    assert done.returncode == 0 and done.stderr == b"", done.stderr.decode()


def test_recent_and_search_into_a_closed_pipe(daemon: Daemon) -> None:
    for i in range(3):
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": f"Pipes close early, note {i}.",
                                                               "kind": "fact", "project": "pipes"})
        assert status == 201, body
    for argv in (("recent", "--all"), ("search", "pipes close", "--all")):
        done = _into_closed_pipe(daemon.data_dir, *argv, AI_MEMORY_PORT=str(daemon.port))
        assert done.returncode == 0 and done.stderr == b"", (argv, done.stderr.decode())


def test_bash_completion_completes_verbs_and_options(tmp_path: Path) -> None:
    script = run_cli(tmp_path / "data", "completions", "bash")
    assert script.returncode == 0, script.stderr
    probe = (f"source {_saved(tmp_path, 'ai-memory.bash', script.stdout)}\n"
             "COMP_WORDS=(ai-memory serv); COMP_CWORD=1; _shtab_ai_memory; echo \"${COMPREPLY[*]}\"\n"
             "COMP_WORDS=(ai-memory search --ex); COMP_CWORD=2; _shtab_ai_memory; echo \"${COMPREPLY[*]}\"\n"
             "COMP_WORDS=(ai-memory install-hooks --agent c); COMP_CWORD=3; _shtab_ai_memory; echo \"${COMPREPLY[*]}\"\n")
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.stdout.splitlines() == ["serve service", "--explain", "claude codex cursor copilot cline"], \
        done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_completes_verbs(tmp_path: Path) -> None:
    script = run_cli(tmp_path / "data", "completions", "fish")
    path = _saved(tmp_path, "ai-memory.fish", script.stdout)
    done = subprocess.run(["fish", "--no-config", "-c", f"source {path}; complete -C 'ai-memory forget-'"],
                          capture_output=True, text=True, timeout=30)
    assert done.stdout.startswith("forget-sweep\t"), done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_is_valid_zsh_naming_every_verb(tmp_path: Path) -> None:
    script = run_cli(tmp_path / "data", "completions", "zsh")
    path = _saved(tmp_path, "_ai-memory", script.stdout)
    assert subprocess.run(["zsh", "-n", str(path)], capture_output=True, timeout=30).returncode == 0
    assert script.stdout.startswith("#compdef ai-memory") and "forget-sweep" in script.stdout


def _saved(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path
