"""The MCP server answers the handshake before the SDK loads, and exactly once per request."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, Daemon, cli_env

from ai_memory.core.guidance import GUIDANCE, MAX_INSTRUCTIONS
from ai_memory.mcp import catalog
from ai_memory.mcp.fast_start import load_catalog

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}


def test_the_catalog_is_what_the_sdk_server_answers() -> None:
    assert load_catalog() == catalog.generate(), "run: python -m ai_memory.mcp.catalog"


def test_the_instructions_fit_claude_codes_limit() -> None:
    assert len(GUIDANCE) <= MAX_INSTRUCTIONS == 2048
    assert load_catalog()["initialize"]["instructions"] == GUIDANCE


# A meta-path finder holds every import of the SDK (mcp, pydantic) until the probe has read the
# handshake's answers: they can only come from the front.
PROBE = r"""
import json, os, select, sys, threading
release = threading.Event()
class Hold:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types", "pydantic"):
            release.wait()
        return None
sys.meta_path.insert(0, Hold())
host_r, to_server = os.pipe()
from_server, host_w = os.pipe()
os.dup2(host_r, 0)
os.dup2(host_w, 1)
replies = os.fdopen(from_server, "rb")
def ask(message):
    os.write(to_server, json.dumps(message).encode() + b"\n")
    if not select.select([from_server], [], [], 20)[0]:
        sys.stderr.write(json.dumps({"unanswered": message}) + "\n")
        os._exit(1)
    return json.loads(replies.readline())
from ai_memory.cli.main import main
server = threading.Thread(target=main, args=(["mcp"] + sys.argv[1:-1],), daemon=True)
server.start()
init = ask(json.loads(sys.argv[-1]))
os.write(to_server, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
tools = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
prompts = ask({"jsonrpc": "2.0", "id": 4, "method": "prompts/list"})
sdk_loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "pydantic"))
release.set()
status = ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_status", "arguments": {}}})
os.close(to_server)
server.join(timeout=60)
sys.stderr.write(json.dumps({"init": init, "tools": tools, "prompts": prompts, "sdk_loaded": sdk_loaded,
                             "status": status}) + "\n")
"""


def test_the_handshake_is_answered_before_the_sdk_is_imported(daemon: Daemon) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, "--data-dir", str(daemon.data_dir), json.dumps(INITIALIZE)],
                          capture_output=True, text=True, env=cli_env(daemon.data_dir, PYTHONPATH=str(REPO)),
                          timeout=120, cwd=REPO)
    result = json.loads(done.stderr.strip().splitlines()[-1])
    assert result["sdk_loaded"] == [], result["sdk_loaded"]
    assert result["init"]["result"]["protocolVersion"] == "2025-06-18"
    assert result["init"]["result"]["serverInfo"]["name"] == "ai-memory"
    assert [t["name"] for t in result["tools"]["result"]["tools"]][0] == "memory_query"
    assert result["prompts"]["result"] == {"prompts": []}
    # once the SDK is in, a tool call is answered by it, against the daemon
    assert result["status"]["id"] == 3 and result["status"]["result"]["isError"] is False


def test_every_request_gets_exactly_one_answer(daemon: Daemon) -> None:
    """The SDK answers the handshake too (it must see it); the front drops those second answers."""
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": "list", "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "memory_recent", "arguments": {}}},
             {"jsonrpc": "2.0", "id": 8, "method": "ping"}]
    proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=cli_env(daemon.data_dir), cwd=REPO)
    assert proc.stdin is not None and proc.stdout is not None
    for message in lines:
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in range(4)]
    proc.stdin.close()
    rest = proc.stdout.read()
    assert proc.wait(timeout=60) == 0
    assert sorted(str(a["id"]) for a in answers) == ["1", "7", "8", "list"] and rest == b""
    assert next(a for a in answers if a["id"] == 7)["result"]["isError"] is False


def test_a_broken_catalog_reads_as_none(tmp_path: Path) -> None:
    """Then the front answers nothing itself and every request waits for the SDK."""
    (tmp_path / "catalog.json").write_text("{not json")
    assert load_catalog(str(tmp_path / "catalog.json")) is None


LISTS_ONLY = r"""
import json, os, sys, threading
host_r, to_server = os.pipe()
from_server, host_w = os.pipe()
os.dup2(host_r, 0)
os.dup2(host_w, 1)
from ai_memory.cli.main import main
server = threading.Thread(target=main, args=(["mcp"] + sys.argv[1:],), daemon=True)
server.start()
lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
          "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"},
         {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
         {"jsonrpc": "2.0", "id": 4, "method": "ping"}]
os.write(to_server, b"".join(json.dumps(m).encode() + b"\n" for m in lines))
replies = os.fdopen(from_server, "rb")
ids = [json.loads(replies.readline())["id"] for _ in range(4)]
os.close(to_server)
server.join(timeout=20)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "pydantic", "anyio"))
sys.stderr.write(json.dumps({"ids": ids, "finished": not server.is_alive(), "loaded": loaded}) + "\n")
"""


def test_a_session_that_only_lists_never_loads_the_sdk(tmp_path: Path) -> None:
    """Beside an agent on the same cores, a server nobody calls costs no SDK import (1-2 s of CPU)."""
    done = subprocess.run([sys.executable, "-c", LISTS_ONLY, "--data-dir", str(tmp_path / "data")],
                          capture_output=True, text=True, env=cli_env(tmp_path / "data"), timeout=60, cwd=REPO)
    result = json.loads(done.stderr.strip().splitlines()[-1])
    assert result == {"ids": [1, 2, 3, 4], "finished": True, "loaded": []}, result


HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
A_TOOL_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_query",
                                                                             "arguments": {"query": "x"}}}


@pytest.mark.parametrize("session", [[HELLO], [HELLO, A_TOOL_CALL]], ids=["front only", "sdk loaded"])
def test_a_stop_signal_ends_the_server_at_once(tmp_path: Path, session: list[dict]) -> None:
    """Claude Code stops a server with SIGINT and its own exit waits for it (SIGTERM after 100 ms):
    the server must not sit out its input, which the host keeps open."""
    server = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=cli_env(tmp_path / "data"), cwd=REPO)
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in session))
        server.stdin.flush()
        for _ in session:  # every request answered (the tool call as a tool error: no daemon runs)
            assert json.loads(server.stdout.readline())["id"]
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=3) == 128 + signal.SIGINT  # it waited out a 5 s join before
    finally:
        server.kill()
        server.wait()
