"""The MCP tools over Streamable HTTP at /mcp, through the SDK's own HTTP client, against a real
daemon: the same tools as over stdio, each call acting as the caller's token, behind the same
token, Host and Origin checks as every route."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult

from ai_memory.core.own_tools import TOOL_NAMES
from ai_memory.datadir import MCP_HTTP_USED
from conftest import Daemon, run_cli
from wiki_helpers import wait_until

PROJECT = "remote-api"


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    d = Daemon(tmp_path_factory.mktemp("mcp-http") / "data").start()
    yield d
    d.stop()


def session_calls(daemon: Daemon, token: str, calls: list[tuple[str, dict[str, Any]]],
                  project: str | None = PROJECT) -> tuple[list[str], list[CallToolResult]]:
    """(tool names listed, each call's result) over one HTTP session."""
    headers = {"Authorization": f"Bearer {token}", **({"X-AI-Memory-Project": project} if project else {})}
    found: dict[str, Any] = {}

    async def main() -> None:
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(f"{daemon.url}/mcp", http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    found["tools"] = [t.name for t in (await session.list_tools()).tools]
                    found["results"] = [await session.call_tool(name, args) for name, args in calls]

    anyio.run(main)
    return found["tools"], found["results"]


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def test_the_tools_over_http_write_search_and_read_a_past_version(daemon: Daemon) -> None:
    wrote = ("memory_write_page", {"text": "Deploys to staging need the VPN profile acme-stage.", "kind": "gotcha"})
    tools, [stored] = session_calls(daemon, daemon.token, [wrote])
    assert tools == list(TOOL_NAMES)
    assert not stored.is_error, text_of(stored)
    ref = stored.structured_content["id"]
    status, page, _ = daemon.request("GET", f"/v1/pages?id={ref}")
    assert status == 200 and page["project"] == PROJECT  # the project header was the default project
    fixed = ("memory_correct", {"ref": ref, "text": "Deploys to staging need the VPN profile acme-stage-2.", "reason": "renamed"})
    query = ("memory_query", {"query": "staging VPN profile"})
    _, [corrected, hits] = session_calls(daemon, daemon.token, [fixed, query])
    assert not corrected.is_error, text_of(corrected)
    assert "acme-stage" in text_of(hits)
    status, history, _ = daemon.request("GET", f"/v1/pages/history?id={ref}")
    assert status == 200 and len(history["revisions"]) == 2
    first = history["revisions"][-1]["short"]
    _, [now, then] = session_calls(daemon, daemon.token, [("memory_read_page", {"ref": ref}),
                                                          ("memory_read_page", {"ref": ref, "at": first})])
    assert "SUPERSEDED" in text_of(now)
    assert "SUPERSEDED" not in text_of(then) and f"version: {first}" in text_of(then)
    assert then.structured_content["revision"]["short"] == first


def test_each_call_acts_as_its_callers_token(daemon: Daemon) -> None:
    status, ana, _ = daemon.request("POST", "/v1/users", {"name": "ana"})
    assert status == 201, ana
    private = ("memory_write_page", {"text": "Ana's private note: the demo password rotates Fridays.", "kind": "fact",
                                "scope": "private"})
    _, [stored] = session_calls(daemon, ana["token"], [private])
    assert not stored.is_error, text_of(stored)
    ref = stored.structured_content["id"]
    status, page, _ = daemon.request("GET", f"/v1/pages?id={ref}&owner=ana")
    assert status == 200 and page["owner"] == "ana"  # written as ana, not as the daemon's admin
    assert daemon.request("GET", f"/v1/pages?id={ref}")[0] == 404
    status, bob, _ = daemon.request("POST", "/v1/users", {"name": "bob"})
    _, [seen] = session_calls(daemon, bob["token"], [("memory_read_page", {"ref": ref})])
    assert seen.is_error and "no such page" in text_of(seen)


@pytest.mark.parametrize("headers, status", [
    ({}, 401),
    ({"Authorization": "Bearer not-the-token"}, 401),
    ({"Origin": "https://evil.example"}, 403),
    ({"Host": "attacker.example:80"}, 403),
])
def test_mcp_is_behind_the_token_host_and_origin_checks(daemon: Daemon, headers: dict[str, str], status: int) -> None:
    auth = "Authorization" not in headers and status != 401
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    got, reply, _ = daemon.request("POST", "/mcp", body, auth=auth,
                                   headers={"Accept": "application/json, text/event-stream", **headers})
    assert got == status, reply


def test_there_is_no_get_stream_to_hold_open(daemon: Daemon) -> None:
    """Stateless: the server never speaks first, so a GET is 405 at once, not a stream left open."""
    status, _, _ = daemon.request("GET", "/mcp", headers={"Accept": "text/event-stream"}, timeout=5)
    assert status == 405


def mount_state(daemon: Daemon) -> str:
    return daemon.request("GET", "/status")[1]["mounts"]["/mcp"]


def test_install_checks_the_server_and_from_then_on_it_loads_its_tools_at_start_up(tmp_path: Path) -> None:
    """An agent gives an HTTP server a few seconds to list its tools (Claude Code proceeds
    without them after 5 s): the seconds of importing the SDK must not fall on its first call."""
    data_dir, home = tmp_path / "data", tmp_path / "home"
    home.mkdir()
    fresh = Daemon(data_dir).start()
    try:
        assert mount_state(fresh) == "not loaded"  # never used here: a daemon nobody calls pays nothing
        done = run_cli(data_dir, "install-mcp", "--agent", "claude", "--transport", "http", "--url", fresh.url,
                       HOME=str(home))
        assert done.returncode == 0, done.stderr
        assert f"checked: {fresh.url}/mcp offers {len(TOOL_NAMES)} tools" in done.stdout
        assert mount_state(fresh) == "ready"
    finally:
        fresh.stop()
    assert (data_dir / MCP_HTTP_USED).exists()
    again = Daemon(data_dir).start()
    try:
        wait_until(lambda: mount_state(again) == "ready", timeout=60)  # with no call to /mcp at all
    finally:
        again.stop()


def test_a_refused_token_is_said_at_install(daemon: Daemon, tmp_path: Path) -> None:
    other = tmp_path / "data"
    other.mkdir()
    (other / "token").write_text("not-this-daemons-token\n")
    done = run_cli(other, "install-mcp", "--agent", "claude", "--transport", "http", "--url", daemon.url,
                   HOME=str(tmp_path))
    assert done.returncode == 0 and "refused the token (401)" in done.stderr, done.stderr
