"""`ai-memory search` and `status` for people: readable snippets, whole-word highlights, lines
that fit, colour only on a terminal, and messages that say what happened."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Daemon, cli_env, on_a_terminal, run_cli
from wiki_helpers import page_text, wait_until

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("out") / "data").start()
    page = d.data_dir / "wiki" / "ops" / "notes" / "replicas.md"
    page.parent.mkdir(parents=True)
    page.write_text(page_text("Replica sets", "## Certificates\n\nEvery replica in the set trusts the CA cert"
                              " kept in [[vault/ops|the ops vault]]; **rotate it yearly**.", project="ops"))
    d.post_hook({"session_id": "out-1", "hook_event_name": "PostToolUse", "cwd": "/home/dev/ops", "tool_name": "Bash",
                 "tool_input": {"command": "kubectl get pods"},
                 "tool_response": {"stdout": "Created pod zephyrmoth", "noOutputExpected": False}})
    d.post_hook({"session_id": "out-1", "hook_event_name": "PostToolUse", "cwd": "/home/dev/ops", "tool_name": "Edit",
                 "tool_input": {"file_path": "/home/dev/ops/retry.py", "old_string": "def quasar_wrap(fn):",
                                "new_string": "# quasar retries: *args and **kwargs pass through\n"
                                              "def quasar_wrap(fn, *args, **kwargs):\n    return fn(*args, **kwargs)"}})
    wait_until(lambda: _search(d, "ca cert", "--all").returncode == 0 and "Replica" in _search(d, "ca cert", "--all").stdout)
    yield d
    d.stop()


def _search(daemon: Daemon, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_cli(daemon.data_dir, "search", *args, AI_MEMORY_PORT=str(daemon.port), **env)


def _on_a_terminal(daemon: Daemon, *args: str, columns: int = 80, **env: str) -> str:
    """The CLI with stdout on a terminal of ``columns`` columns; what it showed."""
    environ = cli_env(daemon.data_dir, AI_MEMORY_PORT=str(daemon.port), TERM="xterm", **env)
    if "NO_COLOR" not in env:
        environ.pop("NO_COLOR", None)
    environ.pop("COLUMNS", None)
    done, shown = on_a_terminal([sys.executable, "-m", "ai_memory.cli", *args], environ, columns)
    assert done.returncode == 0, done.stderr
    return shown


def test_snippets_are_text_not_markdown_or_tool_json(daemon: Daemon) -> None:
    page = _search(daemon, "rotate ca cert yearly", "--all").stdout
    assert "Every replica in the set trusts the CA cert kept in the ops vault; rotate it yearly" in page, page
    assert "##" not in page and "[[" not in page and "**" not in page
    tool = _search(daemon, "zephyrmoth", "--all").stdout
    assert "Created pod zephyrmoth" in tool, tool
    assert '":' not in tool and "noOutputExpected" not in tool and "{" not in tool


def test_code_is_shown_as_written_not_read_as_markdown(daemon: Daemon) -> None:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": "quasar_wrap kwargs", "all": True})
    assert status == 200, body
    shown = [h["snippet"] for h in body["hits"] + body["raw_hits"]]
    shown += [e["snippet"] for h in body["hits"] for e in h["evidence"]]
    assert any("--- new # quasar retries: *args and **kwargs pass through def quasar_wrap(fn, *args" in s
               for s in shown), shown


def test_highlights_fall_on_whole_words(daemon: Daemon) -> None:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": "CA", "all": True})
    hit = next(h for h in body["hits"] if h["path"] == "ops/notes/replicas.md")
    marked = [hit["snippet"][a:b] for a, b in hit["highlights"]]
    assert marked and set(marked) == {"CA"}, (hit["snippet"], marked)
    shown = _on_a_terminal(daemon, "search", "CA", "--all")
    assert "\x1b[1;33mCA\x1b[0m cert" in shown and "repli\x1b" not in shown, shown


def test_colour_only_on_a_terminal_and_never_with_no_color(daemon: Daemon) -> None:
    assert "\x1b[" not in _search(daemon, "ca cert", "--all").stdout  # a pipe
    assert "\x1b[" not in _on_a_terminal(daemon, "search", "ca cert", "--all", NO_COLOR="1")
    assert "\x1b[" in _on_a_terminal(daemon, "search", "ca cert", "--all")


@pytest.mark.parametrize("columns", [44, 72])
def test_lines_fit_the_terminal(daemon: Daemon, columns: int) -> None:
    shown = _on_a_terminal(daemon, "search", "replica ca cert", "--all", columns=columns)
    lines = [ANSI.sub("", line) for line in shown.splitlines() if line.strip()]
    assert lines and max(len(line) for line in lines) <= columns, lines
    piped = _search(daemon, "replica ca cert", "--all", COLUMNS=str(columns)).stdout.splitlines()
    assert max(len(line) for line in piped) <= columns, piped


def test_a_project_scope_that_excludes_everything_says_try_all(daemon: Daemon) -> None:
    done = _search(daemon, "zephyrmoth", "--project", "elsewhere")
    assert done.returncode == 0 and done.stderr == ""
    assert "no matches in project elsewhere — try --all" in done.stdout, done.stdout
    none = _search(daemon, "nothinglikethisanywhere", "--all")
    assert none.stdout.strip() == "no matches" and none.stderr == ""


def test_status_shows_broken_pages_backlog_and_spool_with_plurals(daemon: Daemon) -> None:
    broken = daemon.data_dir / "wiki" / "ops" / "notes" / "broken.md"
    broken.write_text("---\ntype: [unclosed\n---\n# Broken\n")
    wait_until(lambda: "ops/notes/broken.md" in run_cli(daemon.data_dir, "status", "--url", daemon.url).stdout)
    out = run_cli(daemon.data_dir, "status", "--url", daemon.url).stdout
    assert re.search(r"^pages: +\d+ pages, 1 broken$", out, re.M), out
    assert re.search(r"^observations: +2 events$", out, re.M), out
    assert re.search(r"^sessions: +1 session$", out, re.M), out
    assert re.search(r"^embeddings: +off$", out, re.M) and re.search(r"^spool: +", out, re.M), out
    assert "broken: ops/notes/broken.md: bad frontmatter" in out
    broken.unlink()
