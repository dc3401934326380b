"""The CLI verbs for people, end to end against a real daemon: output, JSON, exit codes 0/1/2."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_memory.cli.main import build_parser
from ai_memory.client.project import resolve_project
from conftest import REPO, Daemon, cli_env, free_port, run_cli

DAEMON_VERBS = (
    ("status",), ("search", "anything"), ("read", "p/notes/x.md"), ("recent",), ("meta",),
    ("write", "a fact", "--kind", "fact"), ("correct", "01ABC", "new text"), ("delete", "p/notes/x.md"),
    ("handoff", "list"), ("handoff", "begin", "summary"), ("handoff", "accept"), ("handoff", "cancel", "01ABC"),
    ("message", "send", "web", "hello"), ("message", "list"), ("message", "pop"), ("message", "cancel", "01ABC"),
)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("cli") / "data").start()
    yield d
    d.stop()


def cli(daemon: Daemon, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(daemon.data_dir, *args, input=input, AI_MEMORY_PORT=str(daemon.port))


def ok_json(daemon: Daemon, *args: str, input: str | None = None) -> Any:
    done = cli(daemon, *args, "--json", input=input)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fails(done: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    """Exit ``code`` with one line on stderr naming ``words`` (usage errors add argparse's usage line)."""
    assert done.returncode == code, (done.stdout, done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("ai-memory")]
    assert len(errors) == 1, done.stderr
    assert all(w in errors[0] for w in words), done.stderr


def test_write_search_correct_read_delete(daemon: Daemon) -> None:
    stored = ok_json(daemon, "write", "Access tokens for the billing API live 15 minutes.", "--kind", "decision",
                     "--project", "cli-acme", "--tag", "auth", "--tag", "billing", "--entity", "TOKEN_TTL",
                     "--source", "ADR-7", "--title", "Token TTL")
    assert stored["created"] and stored["path"].startswith("cli-acme/decisions/token-ttl-")
    found = ok_json(daemon, "search", "billing access tokens", "--project", "cli-acme")
    assert stored["path"] in [hit["path"] for hit in found["hits"]]

    fails(cli(daemon, "write", "Access tokens for the billing API live 15 minutes.", "--kind", "decision",
              "--project", "cli-acme"), 1, "duplicate memory")

    fixed = ok_json(daemon, "correct", stored["id"], "Access tokens for the billing API live 10 minutes.",
                    "--reason", "shortened after the audit")
    assert fixed["supersedes"] == stored["id"] and fixed["path"].startswith("cli-acme/decisions/")

    shown = cli(daemon, "read", fixed["id"])
    assert shown.returncode == 0, shown.stderr
    assert "live 10 minutes" in shown.stdout and "lineage (oldest first):" in shown.stdout
    lineage = shown.stdout.split("lineage (oldest first):")[1]
    assert lineage.index(stored["id"]) < lineage.index(fixed["id"]) and "<- this page" in lineage
    assert "correction: shortened after the audit" in lineage

    old = ok_json(daemon, "read", stored["path"])
    assert old["superseded_by"] == fixed["id"] and [p["id"] for p in old["lineage"]] == [stored["id"], fixed["id"]]
    assert old["frontmatter"]["tags"] == ["auth", "billing"] and old["frontmatter"]["source"] == "ADR-7"

    gone = ok_json(daemon, "delete", fixed["path"])
    assert gone == {"deleted": fixed["path"], "id": fixed["id"]}
    fails(cli(daemon, "read", fixed["id"]), 1, "no such page")
    fails(cli(daemon, "delete", fixed["path"]), 1, "no such page")


def test_write_reads_stdin_defaults_the_project_and_honours_idempotency(daemon: Daemon) -> None:
    project = resolve_project(REPO).name  # run_cli runs in the repository
    args = ("write", "-", "--kind", "gotcha", "--idempotency-key", "cli-stdin-1")
    first = ok_json(daemon, *args, input="  The test suite needs git on PATH.\n")
    assert first["created"] and first["path"].startswith(f"{project}/gotchas/")
    again = cli(daemon, *args, input="The test suite needs git on PATH.")
    assert again.returncode == 0 and "already stored" in again.stdout and first["id"] in again.stdout
    page = ok_json(daemon, "read", first["id"])
    assert page["body"].strip() == "The test suite needs git on PATH." and page["project"] == project


def test_correct_keeps_scope_and_project_and_needs_a_kind_only_when_unknown(daemon: Daemon) -> None:
    pref = ok_json(daemon, "write", "Prefer tabs in Makefiles only.", "--kind", "preference",
                   "--project", "cli-acme", "--scope", "_global")
    assert pref["path"].startswith("_global/preferences/")
    fixed = ok_json(daemon, "correct", pref["path"], "Prefer tabs in Makefiles and Go files.")
    page = ok_json(daemon, "read", fixed["id"])
    assert page["scope"] == "_global" and page["frontmatter"]["kind"] == "preference"
    assert page["frontmatter"]["origin_project"] == "cli-acme"
    fails(cli(daemon, "correct", pref["id"], "Third try."), 1, "already superseded")
    fails(cli(daemon, "correct", "cli-acme/notes/missing.md", "x"), 1, "no such page")


def test_recent_and_meta(daemon: Daemon) -> None:
    stored = ok_json(daemon, "write", "The nightly job runs at 02:00 UTC.", "--kind", "fact", "--project", "cli-meta")
    recent = ok_json(daemon, "recent", "--project", "cli-meta", "-n", "5")
    assert stored["path"] in [p["path"] for p in recent["pages"]] and recent["sessions"] == []
    human = cli(daemon, "recent", "--project", "cli-meta")
    assert human.returncode == 0 and "pages:" in human.stdout and stored["path"] in human.stdout
    meta = ok_json(daemon, "meta", "--project", "cli-meta")
    assert meta["project"] == "cli-meta" and meta["counts"]["project"]["fact"] == 1
    everything = ok_json(daemon, "meta", "--all")
    assert everything["project"] is None and "cli-meta" in [p["project"] for p in everything["projects"]]
    human = cli(daemon, "meta", "--project", "cli-meta")
    assert human.returncode == 0 and "fact 1" in human.stdout and "superseded:" in human.stdout


def test_handoff_begin_list_accept_cancel(daemon: Daemon, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "api").mkdir(parents=True)
    begun = ok_json(daemon, "handoff", "begin", "Token refresh half done", "--cwd", str(repo),
                    "--next-step", "wire the refresh route", "--open-question", "rotate keys?",
                    "--file", "api/auth.py", "--from-agent", "claude")
    assert begun["state"] == "open" and begun["next_steps"] == ["wire the refresh route"]
    listed = ok_json(daemon, "handoff", "list", "--all", "--state", "open")
    assert begun["id"] in [h["id"] for h in listed]
    human = cli(daemon, "handoff", "list", "--project", begun["project"])
    assert human.returncode == 0 and begun["id"] in human.stdout and "Token refresh half done" in human.stdout

    taken = cli(daemon, "handoff", "accept", "--cwd", str(repo / "api"), "--agent", "codex")
    assert taken.returncode == 0, taken.stderr
    assert begun["id"] in taken.stdout and "next: wire the refresh route" in taken.stdout
    assert ok_json(daemon, "handoff", "accept", "--cwd", str(repo / "api")) == {"handoff": None}
    none_left = cli(daemon, "handoff", "accept", "--cwd", str(repo))
    assert none_left.returncode == 0 and "no open handoff" in none_left.stdout
    fails(cli(daemon, "handoff", "cancel", begun["id"]), 1, "handoff is accepted")

    second = ok_json(daemon, "handoff", "begin", "-", "--project", "cli-acme", input="Docs left to write\n")
    assert second["cwd"] is None and second["project"] == "cli-acme"
    cancelled = ok_json(daemon, "handoff", "cancel", second["id"])
    assert cancelled["state"] == "cancelled"
    fails(cli(daemon, "handoff", "cancel", "01NOSUCHHANDOFF"), 1, "no such handoff")


def test_message_send_list_pop_cancel(daemon: Daemon) -> None:
    sent = ok_json(daemon, "message", "send", "cli-web", "The /v2/token response now has expires_in.",
                   "--from-project", "cli-api", "--from-agent", "codex")
    assert sent["state"] == "open" and sent["from_project"] == "cli-api"
    listed = ok_json(daemon, "message", "list", "--project", "cli-web")
    assert [m["id"] for m in listed] == [sent["id"]]
    popped = ok_json(daemon, "message", "pop", "--project", "cli-web", "--limit", "5")
    assert [m["id"] for m in popped] == [sent["id"]]
    empty = cli(daemon, "message", "pop", "--project", "cli-web")
    assert empty.returncode == 0 and "no open messages for cli-web" in empty.stdout

    other = cli(daemon, "message", "send", "cli-web", "-", input="Second note\n")
    assert other.returncode == 0 and "waits for cli-web" in other.stdout
    waiting = ok_json(daemon, "message", "list", "--project", "cli-web", "--state", "open")
    assert len(waiting) == 1 and waiting[0]["from_project"] == resolve_project(REPO).name
    human = cli(daemon, "message", "list", "--project", "cli-web")
    assert "Second note" in human.stdout and "popped" in human.stdout
    assert ok_json(daemon, "message", "cancel", waiting[0]["id"])["state"] == "cancelled"
    fails(cli(daemon, "message", "cancel", sent["id"]), 1, "message is popped")
    fails(cli(daemon, "message", "cancel", "01NOSUCHMESSAGE"), 1, "no such message")


@pytest.mark.parametrize("args,words", [
    (("write", "a fact"), ("--kind",)),
    (("write", "a fact", "--kind", "opinion"), ("unknown",)),
    (("write", "   ", "--kind", "fact"), ("is empty",)),
    (("write", "-", "--kind", "fact"), ("nothing on stdin",)),
    (("handoff",), ("ACTION",)),
    (("message", "shout"), ("unknown",)),
    (("recent", "-n", "0"), ("--limit",)),
    (("meta", "--all", "--project", "x"), ("not allowed",)),
    (("handoff", "list", "--state", "lost"), ("unknown",)),
])
def test_usage_errors_exit_2(daemon: Daemon, args: tuple[str, ...], words: tuple[str, ...]) -> None:
    fails(cli(daemon, *args, input=""), 2, *words)


def test_daemon_refusals_exit_1_with_its_reason(daemon: Daemon) -> None:
    fails(cli(daemon, "write", "x", "--kind", "fact", "--project", "bad name!"), 1, "bad project name")
    fails(cli(daemon, "search", "x", "-k", "0"), 1, "k must be")


def test_data_dir_and_url_flags_are_honoured(daemon: Daemon, tmp_path: Path) -> None:
    elsewhere = tmp_path / "no-daemon-here"
    by_flags = run_cli(elsewhere, "meta", "--all", "--json", "--data-dir", str(daemon.data_dir), "--url", daemon.url)
    assert by_flags.returncode == 0, by_flags.stderr
    assert "projects" in json.loads(by_flags.stdout)
    no_token = run_cli(elsewhere, "meta", "--all", "--url", daemon.url)  # the token lives in the data dir
    assert no_token.returncode == 1


def test_stopped_daemon_is_one_line_and_exit_1(tmp_path: Path) -> None:
    port = str(free_port())
    for args in DAEMON_VERBS:
        done = run_cli(tmp_path / "data", *args, AI_MEMORY_PORT=port)
        fails(done, 1, "not running", "start it with")


Named = tuple[tuple[str, ...], argparse.ArgumentParser]


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[Named]:
    """Every verb's and every action's parser, by its path of names."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield (*path, name), child
                yield from _parsers(child, (*path, name))


def test_every_verb_and_action_has_help_with_an_example_and_the_common_flags() -> None:
    parsers = dict(_parsers(build_parser()))
    for path, parser in parsers.items():
        text = parser.format_help()
        assert "example" in text.lower(), path
        leaf = not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        if leaf:
            assert "--data-dir" in text and "--url" in text, path
    for verb in ("read", "recent", "write", "correct", "delete", "meta", "handoff", "message",
                 "install-rules", "uninstall-rules", "install-mcp", "uninstall-mcp"):
        assert (verb,) in parsers


def test_hardcoded_choices_match_the_daemon() -> None:
    from ai_memory.cli import handoff, message, write
    from ai_memory.coordination import handoffs, messages
    from ai_memory.core.page import MEMORY_KINDS, SCOPES

    assert write.KINDS == tuple(MEMORY_KINDS) and write.SCOPES == SCOPES
    assert handoff.STATES == handoffs.STATES and message.STATES == messages.STATES


def test_building_the_parser_stays_light(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from ai_memory.cli.main import build_parser\n"
        "build_parser()\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('aiohttp', 'torch', 'pygit2', 'sqlite3', 'numpy',"
        " 'sentence_transformers', 'yaml', 'frontmatter', 'watchdog', 'mcp')"
        " or m.startswith(('ai_memory.store', 'ai_memory.server', 'ai_memory.wiki', 'ai_memory.coordination'))]\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=cli_env(tmp_path), timeout=30)
    assert "HEAVY []" in done.stdout, done.stdout + done.stderr
