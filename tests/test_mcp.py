"""``ai-memory mcp``: the SDK's own stdio client drives the server against a real daemon."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_args

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from conftest import REPO, Daemon, cli_env, free_port

from ai_memory.core.guidance import GUIDANCE
from ai_memory.core.page import MEMORY_KINDS
from ai_memory.core.wire import Kind, SearchKind
from ai_memory.core.own_tools import TOOL_NAMES

PROJECT = "mcp-api"
READ_ONLY = {"memory_query", "memory_read_page", "memory_recent", "memory_status", "memory_meta",
             "memory_briefing", "memory_read_session_observations", "memory_handoff_list", "memory_message_list",
             "memory_lint"}
DESTRUCTIVE = {"memory_delete_page", "memory_handoff_cancel", "memory_message_cancel"}
# Minimal valid arguments for every tool: the stopped-daemon test calls each one with these.
VALID_ARGS: dict[str, dict[str, Any]] = {
    "memory_query": {"query": "token"}, "memory_read_page": {"ref": "01ABC"}, "memory_recent": {},
    "memory_status": {}, "memory_meta": {}, "memory_briefing": {},
    "memory_read_session_observations": {"session_id": "s1"}, "memory_lint": {},
    "memory_write_page": {"text": "Tokens live 15 minutes.", "kind": "fact"},
    "memory_correct": {"ref": "01ABC", "text": "Tokens live 30 minutes.", "reason": "changed"},
    "memory_delete_page": {"ref": "01ABC"}, "memory_handoff_begin": {"summary": "half done"},
    "memory_feedback": {"ref": "01ABC", "signal": "helpful"},
    "memory_handoff_list": {}, "memory_handoff_accept": {}, "memory_handoff_cancel": {"handoff_id": "h1"},
    "memory_message_send": {"to_project": "web", "body": "hi"}, "memory_message_list": {},
    "memory_message_pop": {}, "memory_message_cancel": {"message_id": "m1"},
}
Scenario = Callable[[ClientSession], Awaitable[None]]


# -- fixtures and helpers

@pytest.fixture(scope="module")
def daemon_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "data"


@pytest.fixture(scope="module")
def daemon(daemon_dir: Path) -> Any:
    d = Daemon(daemon_dir).start()
    yield d
    d.stop()


@pytest.fixture(scope="module")
def project_dir(daemon_dir: Path) -> Path:
    """A working directory whose project is named by a marker file, so defaults are predictable."""
    path = daemon_dir.parent / "work" / "api"
    path.mkdir(parents=True)
    (path / ".ai-memory.toml").write_text(f'project = "{PROJECT}"\n')
    return path.resolve()


def server_env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    env = cli_env(data_dir, AI_MEMORY_PORT=str(port), PYTHONPATH=str(REPO))
    env.pop("CLAUDE_PROJECT_DIR", None)  # the test's own host may set it
    return {**env, **extra}


@asynccontextmanager
async def connect(env: dict[str, str], cwd: Path, args: tuple[str, ...] = (),
                  command: tuple[str, ...] = ("-m", "ai_memory.mcp"), modern: bool = False
                  ) -> AsyncIterator[ClientSession]:
    """An SDK client session with the server as a subprocess; stdout must stay pure.

    ``modern``: the 2026-07-28 era (server/discover, no handshake); else the initialize handshake
    that hosts such as Claude Code still use.
    """
    problems: list[Exception] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a stdout line that is not JSON-RPC lands here
            problems.append(message)

    params = StdioServerParameters(command=sys.executable, args=[*command, *args], env=env, cwd=cwd)
    with open(cwd.parent / "mcp-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await (session.discover() if modern else session.initialize())
                yield session
    assert not problems, problems


def drive(env: dict[str, str], cwd: Path, scenario: Scenario, **kwargs: Any) -> None:
    async def main() -> None:
        async with connect(env, cwd, **kwargs) as session:
            await scenario(session)

    anyio.run(main)


async def call(session: ClientSession, name: str, **arguments: Any) -> CallToolResult:
    result = await session.call_tool(name, arguments)
    assert isinstance(result, CallToolResult)
    return result


async def ok(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    """A successful call: structured content present, a text rendering beside it."""
    result = await call(session, name, **arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    assert result.content and result.content[0].type == "text" and result.content[0].text
    return result.structured_content


async def error(session: ClientSession, name: str, **arguments: Any) -> str:
    result = await call(session, name, **arguments)
    assert result.is_error, result
    return result.content[0].text


# -- no daemon needed

def test_import_path_is_light() -> None:
    code = ("import sys, ai_memory.mcp.server, ai_memory.mcp.__main__, ai_memory.cli.mcp_server\n"
            "heavy = ('torch', 'sentence_transformers', 'aiohttp', 'numpy', 'pygit2', 'ai_memory.store',"
            " 'ai_memory.retrieval', 'ai_memory.runtime', 'ai_memory.server', 'ai_memory.wiki')\n"
            "print([m for m in sys.modules if m.startswith(heavy)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


def test_kind_enums_match_the_daemon() -> None:
    from ai_memory.retrieval.search import KIND_TYPES

    assert get_args(Kind) == tuple(MEMORY_KINDS)
    assert set(get_args(SearchKind)) == set(KIND_TYPES)


def test_cli_verb_has_help_with_an_example() -> None:
    import argparse

    from ai_memory.cli import mcp_server

    sub = argparse.ArgumentParser().add_subparsers()
    mcp_server.register(sub, argparse.ArgumentParser(add_help=False))
    parser = sub.choices["mcp"]
    assert "example: claude mcp add" in parser.format_help()


# -- a running daemon

def test_lists_every_tool_in_order_with_annotations(daemon: Daemon, project_dir: Path) -> None:
    async def scenario(session: ClientSession) -> None:
        assert session.instructions == GUIDANCE
        assert session.server_info is not None and session.server_info.name == "ai-memory"
        tools = (await session.list_tools()).tools
        assert [t.name for t in tools] == list(TOOL_NAMES)
        for tool in tools:
            hints = tool.annotations
            assert hints is not None and hints.title and hints.open_world_hint is False, tool.name
            assert hints.read_only_hint is (tool.name in READ_ONLY), tool.name
            assert hints.destructive_hint is (tool.name in DESTRUCTIVE), tool.name
            assert len(tool.description or "") > 80, tool.name
            assert tool.input_schema["type"] == "object" and tool.output_schema, tool.name
            assert tool.input_schema["additionalProperties"] is False, tool.name
        by_name = {t.name: t for t in tools}
        assert by_name["memory_handoff_accept"].annotations.idempotent_hint is False
        assert by_name["memory_message_pop"].annotations.idempotent_hint is False
        assert by_name["memory_write_page"].annotations.idempotent_hint is False
        assert by_name["memory_feedback"].annotations.idempotent_hint is False
        kinds = by_name["memory_write_page"].input_schema["properties"]["kind"]
        assert kinds["enum"] == list(MEMORY_KINDS) and kinds["description"]

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario)


def test_modern_protocol_era_is_served_too(daemon: Daemon, project_dir: Path) -> None:
    async def scenario(s: ClientSession) -> None:
        assert s.discover_result is not None and s.instructions == GUIDANCE
        assert [t.name for t in (await s.list_tools()).tools] == list(TOOL_NAMES)
        assert (await ok(s, "memory_status"))["version"]

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario, modern=True)


def test_write_read_search_correct_delete(daemon: Daemon, project_dir: Path) -> None:
    async def scenario(s: ClientSession) -> None:
        text = "The session token TTL is 15 minutes because the gateway refreshes silently."
        stored = await ok(s, "memory_write_page", text=text, kind="decision", tags=["auth"], entities=["gateway"])
        assert stored["created"] and stored["path"].startswith(f"{PROJECT}/decisions/")
        again = await error(s, "memory_write_page", text=text, kind="decision")
        assert again.startswith("conflict: duplicate memory") and stored["id"] in again
        page = await ok(s, "memory_read_page", ref=stored["id"])
        assert page["path"] == stored["path"] and "15 minutes" in page["body"] and not page["truncated"]
        hits = (await ok(s, "memory_query", query="session token TTL gateway"))["hits"]
        assert hits and hits[0]["path"] == stored["path"]

        fixed = await ok(s, "memory_correct", ref=stored["id"], text="The session token TTL is 30 minutes.",
                         reason="raised for mobile clients")
        assert fixed["supersedes"] and fixed["id"] != stored["id"]
        new_page = await ok(s, "memory_read_page", ref=fixed["id"])
        assert new_page["frontmatter"]["kind"] == "decision" and new_page["project"] == PROJECT
        assert new_page["frontmatter"]["tags"] == ["auth"] and [x["id"] for x in new_page["lineage"]] == [
            stored["id"], fixed["id"]]
        twice = await error(s, "memory_correct", ref=stored["id"], text="Forty minutes.", reason="again")
        assert "already superseded" in twice and fixed["id"] in twice
        hits = (await ok(s, "memory_query", query="session token TTL"))["hits"]
        assert stored["path"] not in [h["path"] for h in hits]

        rated = await ok(s, "memory_feedback", ref=fixed["id"], signal="helpful")
        assert rated["path"] == new_page["path"] and rated["salience"] > rated["salience_before"]
        assert "signal" in await error(s, "memory_feedback", ref=fixed["id"], signal="great")

        gone = await ok(s, "memory_delete_page", ref=fixed["id"])
        assert gone["deleted"] == new_page["path"]
        assert (await error(s, "memory_read_page", ref=fixed["id"])).startswith("not found")
        assert (await error(s, "memory_delete_page", ref=fixed["id"])).startswith("not found")
        assert (await error(s, "memory_feedback", ref=fixed["id"], signal="wrong")).startswith("not found")

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario)


def test_status_recent_meta_briefing(daemon: Daemon, project_dir: Path) -> None:
    async def scenario(s: ClientSession) -> None:
        await ok(s, "memory_write_page", text="Run migrations with make migrate, never by hand.", kind="procedure")
        status = await ok(s, "memory_status")
        assert status["data_dir"] == str(daemon.data_dir.resolve()) and "pages" in status["counts"]
        recent = await ok(s, "memory_recent", limit=5)
        assert any("migrations" in p["title"].lower() for p in recent["pages"])
        assert all(p["project"] in (PROJECT, "_global") for p in recent["pages"])
        meta = await ok(s, "memory_meta")
        assert meta["project"] == PROJECT and meta["counts"]["project"]["procedure"] >= 1
        assert (await ok(s, "memory_meta", all_projects=True))["project"] is None
        briefing = await ok(s, "memory_briefing", agent="claude")
        assert briefing["project"] == PROJECT and isinstance(briefing["text"], str)

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario)


def test_read_session_observations(daemon: Daemon, project_dir: Path) -> None:
    for prompt in ("first prompt about caching", "second prompt about eviction"):
        status, _ = daemon.post_hook({"session_id": "mcp-obs-1", "hook_event_name": "UserPromptSubmit",
                                      "prompt": prompt, "cwd": str(project_dir)})
        assert status == 202

    async def scenario(s: ClientSession) -> None:
        found = await ok(s, "memory_read_session_observations", session_id="mcp-obs-1")
        assert found["total"] == 2 and not found["truncated"]
        assert "payload" not in found["observations"][0]
        first = await ok(s, "memory_read_session_observations", session_id="mcp-obs-1", limit=1,
                         include_payload=True)
        assert first["truncated"] and len(first["observations"]) == 1 and "payload" in first["observations"][0]
        missing = await error(s, "memory_read_session_observations", session_id="no-such-session")
        assert missing.startswith("not found: no such session")

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario)


def test_handoffs_begin_list_accept_cancel(daemon: Daemon, project_dir: Path) -> None:
    async def scenario(s: ClientSession) -> None:
        begun = (await ok(s, "memory_handoff_begin", summary="Auth refactor half done", next_steps=["write tests"],
                          files_touched=["auth.py"], from_agent="claude"))["handoff"]
        assert begun["state"] == "open" and begun["project"] == PROJECT and begun["cwd"] == str(project_dir)
        listed = (await ok(s, "memory_handoff_list", state="open"))["handoffs"]
        assert begun["id"] in [h["id"] for h in listed]
        own = await ok(s, "memory_handoff_accept")  # an agent never takes the handoff it just left
        assert own["handoff"] is None
        taken = (await ok(s, "memory_handoff_accept", session_id="next-agent-session", agent="codex"))["handoff"]
        assert taken["id"] == begun["id"] and taken["state"] == "accepted"
        late = await error(s, "memory_handoff_cancel", handoff_id=begun["id"])
        assert late.startswith("conflict: handoff is accepted")

        other = (await ok(s, "memory_handoff_begin", summary="Never mind", project="mcp-other"))["handoff"]
        cancelled = (await ok(s, "memory_handoff_cancel", handoff_id=other["id"]))["handoff"]
        assert cancelled["state"] == "cancelled"
        assert (await error(s, "memory_handoff_cancel", handoff_id="no-such-id")).startswith("not found")

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario)


def test_messages_send_list_pop_cancel(daemon: Daemon, project_dir: Path) -> None:
    async def scenario(s: ClientSession) -> None:
        sent = (await ok(s, "memory_message_send", to_project="mcp-web", body="The /v2/users API now pages."))
        message = sent["message"]
        assert message["from_project"] == PROJECT and message["state"] == "open"
        listed = (await ok(s, "memory_message_list", project="mcp-web"))["messages"]
        assert [m["id"] for m in listed] == [message["id"]]
        popped = (await ok(s, "memory_message_pop", project="mcp-web"))["messages"]
        assert [m["id"] for m in popped] == [message["id"]]
        assert (await ok(s, "memory_message_pop", project="mcp-web"))["messages"] == []
        late = await error(s, "memory_message_cancel", message_id=message["id"])
        assert late.startswith("conflict: message is popped")

        second = (await ok(s, "memory_message_send", to_project="mcp-web", body="Ignore that.", ttl_s=60))["message"]
        assert (await ok(s, "memory_message_cancel", message_id=second["id"]))["message"]["state"] == "cancelled"

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario)


def test_invalid_inputs_are_tool_errors(daemon: Daemon, project_dir: Path) -> None:
    bad_calls: list[tuple[str, dict[str, Any], str]] = [
        ("memory_query", {}, "query"),                                  # missing required argument
        ("memory_query", {"query": ""}, "query"),                       # too short
        ("memory_query", {"query": "x", "k": 500}, "k"),               # out of range
        ("memory_query", {"query": "x", "kinds": ["secret"]}, "kinds"),  # not in the enum
        ("memory_query", {"query": "x", "as_of": "yesterday-ish"}, "as_of"),  # refused by the daemon
        ("memory_write_page", {"text": "x", "kind": "opinion"}, "kind"),
        ("memory_write_page", {"text": "x", "kind": "fact", "project": "no spaces"}, "project"),
        ("memory_write_page", {"text": "x", "kind": "fact", "expires_at": "soon"}, "expires_at"),
        ("memory_write_page", {"text": "   ", "kind": "fact"}, "missing text"),
        ("memory_recent", {"limit": "many"}, "limit"),
        ("memory_read_page", {"ref": "no/such/page.md"}, "not found"),
        ("memory_correct", {"ref": "nope", "text": "x"}, "reason"),
        ("memory_handoff_begin", {"summary": "x", "next_steps": "not a list"}, "next_steps"),
        ("memory_handoff_list", {"state": "lost"}, "state"),
        ("memory_message_send", {"to_project": "web", "body": "x", "ttl_s": 0}, "ttl_s"),
        ("memory_message_pop", {"limit": 0}, "limit"),
        ("memory_status", {"verbose": True}, "unknown argument verbose"),
        ("memory_recent", {"projects": "web"}, "unknown argument projects"),
    ]

    async def scenario(s: ClientSession) -> None:
        for name, arguments, expected in bad_calls:
            text = await error(s, name, **arguments)
            assert text.startswith(("invalid input: ", "not found: ")) and expected in text, (name, arguments, text)
        assert (await ok(s, "memory_status"))["version"]  # the server survived every one

    drive(server_env(daemon.data_dir, daemon.port), project_dir, scenario)


def test_claude_project_dir_sets_the_default_project(daemon: Daemon, project_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def scenario(s: ClientSession) -> None:
        stored = await ok(s, "memory_write_page", text="Feature flags live in flags.yaml.", kind="fact")
        assert stored["path"].startswith(f"{PROJECT}/facts/")

    env = server_env(daemon.data_dir, daemon.port, CLAUDE_PROJECT_DIR=str(project_dir))
    drive(env, elsewhere, scenario)


def test_the_cli_verb_serves_with_data_dir_and_url(daemon: Daemon, project_dir: Path) -> None:
    """``ai-memory mcp --data-dir --url`` (through main once registered, else the verb module)."""
    from ai_memory.cli import main as cli_main

    launcher = ("import argparse, sys\nfrom ai_memory.cli import mcp_server\n"
                "common = argparse.ArgumentParser(add_help=False)\n"
                "common.add_argument('--data-dir'); common.add_argument('--url')\n"
                "parser = argparse.ArgumentParser(); mcp_server.register(parser.add_subparsers(), common)\n"
                "args = parser.parse_args(sys.argv[1:]); sys.exit(args.run(args))")
    registered = "mcp_server" in cli_main.VERBS
    command = ("-m", "ai_memory.cli") if registered else ("-c", launcher)
    unused = project_dir.parent / "no-data"
    env = cli_env(unused, PYTHONPATH=str(REPO))  # the flags must win over $AI_MEMORY_DATA_DIR
    args = ("mcp", "--data-dir", str(daemon.data_dir), "--url", daemon.url)

    async def scenario(s: ClientSession) -> None:
        assert [t.name for t in (await s.list_tools()).tools] == list(TOOL_NAMES)
        assert (await ok(s, "memory_status"))["data_dir"] == str(daemon.data_dir.resolve())

    drive(env, project_dir, scenario, args=args, command=command)
    assert not unused.exists()


def test_every_tool_says_how_to_start_a_stopped_daemon(tmp_path: Path, project_dir: Path) -> None:
    data_dir = tmp_path / "data"
    port = free_port()  # nothing listens here

    async def scenario(s: ClientSession) -> None:
        for name in TOOL_NAMES:
            text = await error(s, name, **VALID_ARGS[name])
            assert text.startswith("daemon unavailable: the ai-memory daemon is not running"), (name, text)
            assert f"127.0.0.1:{port}" in text and "ai-memory serve" in text, (name, text)

    assert set(VALID_ARGS) == set(TOOL_NAMES)
    drive(server_env(data_dir, port), project_dir, scenario)


@pytest.mark.timeout(60)
def test_stdout_carries_only_protocol(daemon: Daemon, project_dir: Path) -> None:
    """Raw JSON-RPC over the pipe: every line the server prints is one protocol message."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_status", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "memory_query", "arguments": {}}},
    ]
    with open(project_dir.parent / "raw-stderr.log", "w") as errlog:
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.mcp"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=errlog, text=True, cwd=project_dir,
                                env=server_env(daemon.data_dir, daemon.port))
        assert proc.stdin is not None and proc.stdout is not None
        lines = []
        for request in requests:  # one at a time: closing stdin early would cancel calls in flight
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            if "id" in request:
                lines.append(proc.stdout.readline())
        proc.stdin.close()
        lines += proc.stdout.read().splitlines()  # whatever else it printed before exiting
        assert proc.wait(timeout=30) == 0
    messages = [json.loads(line) for line in lines]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    answers = {m["id"]: m for m in messages}
    assert sorted(answers) == [1, 2, 3, 4]
    assert [t["name"] for t in answers[2]["result"]["tools"]] == list(TOOL_NAMES)
    assert answers[3]["result"]["structuredContent"]["version"]
    assert answers[4]["result"]["isError"] is True
