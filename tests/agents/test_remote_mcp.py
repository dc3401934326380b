"""A real Claude Code reaching the MCP tools over Streamable HTTP: ``install-mcp --transport
http`` writes the form ``claude mcp add --transport http`` would, with no local server process;
one short session whose search returns the memory through the daemon's /mcp.

What Claude Code 2.1.197 was seen to do: it connects to an HTTP server before its first model
request and offers its tools as ``mcp__ai-memory__<tool>``, as for a stdio one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from clis import PINNED, ensure_or_skip
from harness import World, memory_query, project_name
from stub_model import Script, StubModel

AGENT = "claude"
REMEMBERED = "Release builds are signed with the yubikey-slot-9c key, never a file key."


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    clis = {AGENT: ensure_or_skip(PINNED[AGENT])}
    stub = StubModel().start()
    w = World(tmp_path_factory.mktemp("remote-mcp"), clis, stub)
    try:
        w.ai_memory("install-mcp", "--agent", AGENT, "--transport", "http")
        w.ai_memory("write", "--kind", "decision", "--project", project_name(AGENT), REMEMBERED)
        yield w
    finally:
        w.daemon.stop()
        stub.close()


def test_claude_searches_memory_over_http(world: World) -> None:
    entry = json.loads((world.home / ".claude.json").read_text())["mcpServers"]["ai-memory"]
    assert entry["type"] == "http" and entry["url"] == f"{world.daemon.url}/mcp" and "command" not in entry
    query = memory_query("release signing key")
    query.args["project"] = project_name(AGENT)  # over HTTP the default project is the header's, none here
    run = world.run(AGENT, "How are release builds signed?", Script([query], reply="Signed with the yubikey.")).check()
    assert "memory_query" in run.main[0].text, "the HTTP server's tools are listed in the first model request"
    assert any("yubikey-slot-9c" in r.text for r in run.main[1:]), "the search over /mcp returned the memory"
