"""install-mcp --transport http: each agent's own form of a Streamable HTTP server with a header,
the token only in a private file (0600) and, in a project, kept out of git."""

from __future__ import annotations

import json
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from ai_memory.datadir import MCP_HTTP_USED

from test_install_mcp import CODEX_TOML, GEMINI_SETTINGS, cli, ok, write_json

SERVER = "http://team.example:49374"
TOKEN = "team-token-of-ana"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "token").write_text(TOKEN + "\n")
    return tmp_path / "home"


def install(home: Path, agent: str, *extra: str, **kw) -> None:
    ok(home, "install-mcp", "--agent", agent, "--transport", "http", "--url", SERVER, *extra, **kw)


def private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) == 0o600


def test_claude_gets_type_http_url_and_the_bearer_header(home: Path) -> None:
    done = ok(home, "install-mcp", "--agent", "claude", "--transport", "http", "--url", SERVER)
    assert f"{SERVER}/mcp does not answer yet" in done.stdout  # no such host: written all the same
    path = home / ".claude.json"
    entry = json.loads(path.read_text())["mcpServers"]["ai-memory"]
    assert entry == {"type": "http", "url": f"{SERVER}/mcp", "headers": {"Authorization": f"Bearer {TOKEN}"}}
    assert private(path)
    assert (home.parent / "data" / MCP_HTTP_USED).exists(), "the daemon of this data dir loads the tools at start-up"


def test_codex_gets_url_and_http_headers_and_keeps_the_rest(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_TOML)
    install(home, "codex")
    doc = tomllib.loads(path.read_text())
    assert doc["mcp_servers"]["ai-memory"] == {"url": f"{SERVER}/mcp",
                                               "http_headers": {"Authorization": f"Bearer {TOKEN}"}}
    assert path.read_text().startswith(CODEX_TOML) and private(path)
    ok(home, "uninstall-mcp", "--agent", "codex")
    assert path.read_text() == CODEX_TOML


def test_gemini_gets_httpurl_not_its_sse_url(home: Path) -> None:
    path = home / ".gemini" / "settings.json"
    write_json(path, GEMINI_SETTINGS)
    install(home, "gemini")
    doc = json.loads(path.read_text())
    assert doc["mcpServers"]["ai-memory"] == {"httpUrl": f"{SERVER}/mcp",
                                              "headers": {"Authorization": f"Bearer {TOKEN}"}}
    assert doc["mcpServers"]["fs"] == GEMINI_SETTINGS["mcpServers"]["fs"] and private(path)


def test_switching_transport_replaces_our_keys_only(home: Path) -> None:
    path = home / ".gemini" / "settings.json"
    ok(home, "install-mcp", "--agent", "gemini")
    entry = json.loads(path.read_text())["mcpServers"]["ai-memory"]
    write_json(path, {"mcpServers": {"ai-memory": {**entry, "timeout": 30000}}})
    install(home, "gemini")
    assert json.loads(path.read_text())["mcpServers"]["ai-memory"] == {
        "timeout": 30000, "httpUrl": f"{SERVER}/mcp", "headers": {"Authorization": f"Bearer {TOKEN}"}}
    ok(home, "install-mcp", "--agent", "gemini")
    back = json.loads(path.read_text())["mcpServers"]["ai-memory"]
    assert "httpUrl" not in back and "headers" not in back and back["command"] == entry["command"]


def test_project_scope_names_the_project_and_keeps_the_token_out_of_git(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".ai-memory.toml").write_text('project = "acme-api"\n')
    install(home, "claude", "--scope", "project", "--project-dir", str(project))
    mcp_json = project / ".mcp.json"
    entry = json.loads(mcp_json.read_text())["mcpServers"]["ai-memory"]
    assert entry["headers"] == {"Authorization": f"Bearer {TOKEN}", "X-AI-Memory-Project": "acme-api"}
    assert private(mcp_json)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                            capture_output=True, text=True, check=True).stdout
    assert ".mcp.json" not in status and TOKEN not in status


def test_no_token_is_one_line_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    (tmp_path / "data" / "token").unlink()
    done = cli(home, "install-mcp", "--agent", "claude", "--transport", "http", "--url", SERVER)
    assert done.returncode == 2 and "no token" in done.stderr
    assert not (home / ".claude.json").exists()
