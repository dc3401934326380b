"""install-mcp / uninstall-mcp: register `ai-memory mcp` with Claude Code, Codex and Gemini CLI."""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, SHARED, cli_env, settings_backups

SCHEMA = SHARED / "schemas" / "claude-code-settings.schema.json"
CUSTOM_URL = "http://127.0.0.1:49999"

# A slice of a real ~/.claude.json: Claude Code keeps account and per-project state here.
CLAUDE_JSON: dict[str, Any] = {
    "numStartups": 42,
    "installMethod": "native",
    "theme": "dark",
    "oauthAccount": {"accountUuid": "0000", "emailAddress": "me@example.com"},
    "projects": {"/home/me/api": {"allowedTools": [], "mcpServers": {}, "hasTrustDialogAccepted": True}},
    "mcpServers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}},
    "tipsHistory": {"new-user-warmup": 7},
}
CODEX_TOML = """\
# my codex config
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]   # keep this comment

[profiles.fast]
model = "gpt-5-mini"
"""
GEMINI_SETTINGS: dict[str, Any] = {
    "ui": {"theme": "GitHub"},
    "mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs-mcp"], "trust": False}},
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def cli(home: Path, *args: str, data_dir: Path | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH: this checkout's package, whichever directory the verb runs in
    env = cli_env(data_dir or home.parent / "data", HOME=str(home), PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "ai_memory.cli", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=env)


def ok(home: Path, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    done = cli(home, *args, **kw)
    assert done.returncode == 0, done.stderr
    return done


def write_json(path: Path, doc: dict[str, Any]) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path.read_bytes()


def assert_our_command_runs(entry: dict[str, Any]) -> None:
    """The registered command is absolute and is this ai-memory (``mcp`` itself is another verb's job)."""
    assert Path(entry["command"]).is_absolute() and entry["args"][-1] == "mcp"
    launcher = [entry["command"], *entry["args"][:-1], "--version"]
    done = subprocess.run(launcher, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "ai-memory" in done.stdout


def assert_portable(entry: dict[str, Any]) -> None:
    """A project's entry: ``ai-memory mcp`` by name, nothing of this machine pinned; it runs
    wherever ai-memory is on PATH."""
    assert entry["command"] == "ai-memory" and entry["args"] == ["mcp"] and "env" not in entry
    found = shutil.which("ai-memory", path=str(Path(sys.executable).parent))
    assert found is not None
    assert_our_command_runs({**entry, "command": found})


def validator() -> Any:
    if not SCHEMA.exists():
        pytest.skip(f"Claude Code settings schema not found at {SCHEMA} (it lives in ../shared)")
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))


def test_claude_user_scope_keeps_the_big_file_and_is_idempotent(home: Path, tmp_path: Path) -> None:
    path = home / ".claude.json"
    original = write_json(path, CLAUDE_JSON)
    done = ok(home, "install-mcp", "--agent", "claude", "--url", CUSTOM_URL)
    assert "updated" in done.stdout and "restart the agent" in done.stdout
    doc = json.loads(path.read_text())
    entry = doc["mcpServers"]["ai-memory"]
    assert entry["type"] == "stdio" and entry["args"] == ["mcp"]
    assert entry["env"] == {"AI_MEMORY_DATA_DIR": str((tmp_path / "data").resolve()), "AI_MEMORY_URL": CUSTOM_URL}
    assert_our_command_runs(entry)
    assert {k: v for k, v in doc.items() if k != "mcpServers"} == {k: v for k, v in CLAUDE_JSON.items()
                                                                   if k != "mcpServers"}
    assert list(doc) == list(CLAUDE_JSON) and doc["mcpServers"]["github"] == CLAUDE_JSON["mcpServers"]["github"]
    assert [b.read_bytes() for b in settings_backups(path, home.parent / "data")] == [original]

    installed = path.read_bytes()
    again = ok(home, "install-mcp", "--agent", "claude", "--url", CUSTOM_URL)
    assert "unchanged" in again.stdout and path.read_bytes() == installed and len(settings_backups(path, home.parent / "data")) == 1

    ok(home, "uninstall-mcp", "--agent", "claude")
    assert path.read_bytes() == original


def test_claude_json_is_created_private_when_missing(home: Path) -> None:
    ok(home, "install-mcp", "--agent", "claude")
    path = home / ".claude.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(json.loads(path.read_text())) == ["mcpServers"]


def test_claude_project_scope_writes_mcp_json_and_approves_it_in_local_settings(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "src").mkdir()
    local = project / ".claude" / "settings.local.json"
    user_local = {"permissions": {"allow": ["Bash(make test)"]}, "enabledMcpjsonServers": ["github"]}
    original_local = write_json(local, user_local)
    ok(home, "install-mcp", "--agent", "claude", "--scope", "project", cwd=project / "src")  # finds the git root
    mcp_json = json.loads((project / ".mcp.json").read_text())
    assert list(mcp_json) == ["mcpServers"] and list(mcp_json["mcpServers"]) == ["ai-memory"]
    assert_portable(mcp_json["mcpServers"]["ai-memory"])
    settings = json.loads(local.read_text())
    assert settings == {**user_local, "enabledMcpjsonServers": ["github", "ai-memory"]}
    validator().validate(settings)
    before = ((project / ".mcp.json").read_bytes(), local.read_bytes())
    ok(home, "install-mcp", "--agent", "claude", "--scope", "project", "--project-dir", str(project))
    assert ((project / ".mcp.json").read_bytes(), local.read_bytes()) == before

    ok(home, "uninstall-mcp", "--agent", "claude", "--scope", "project", "--project-dir", str(project))
    assert local.read_bytes() == original_local
    assert not (project / ".mcp.json").exists()  # install created it; uninstall leaves no {} behind


def test_claude_entries_fit_what_the_settings_schema_says_about_mcp_servers(home: Path, tmp_path: Path) -> None:
    """The schema covers settings.json, not ~/.claude.json or .mcp.json: validate what applies.

    Our server's name and command must be expressible in the allow/deny lists an administrator
    writes (``allowedMcpServers``: ``serverName`` pattern, ``serverCommand`` as the exact argv),
    and the whole file we touch must not clash with the settings schema either.
    """
    check = validator()
    project = tmp_path / "proj"
    project.mkdir()
    ok(home, "install-mcp", "--agent", "claude")
    ok(home, "install-mcp", "--agent", "claude", "--scope", "project", "--project-dir", str(project))
    for path in (home / ".claude.json", project / ".mcp.json"):
        doc = json.loads(path.read_text())
        entry = doc["mcpServers"]["ai-memory"]
        policy = {"allowedMcpServers": [{"serverName": "ai-memory"},
                                        {"serverCommand": [entry["command"], *entry["args"]]}]}
        check.validate(policy)
        check.validate(doc)
        assert set(entry) <= {"type", "command", "args", "env"} and all(isinstance(a, str) for a in entry["args"])
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in entry.get("env", {}).items())
    check.validate(json.loads((project / ".claude" / "settings.local.json").read_text()))


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "qwen", "cursor", "copilot", "opencode"])
def test_uninstall_after_installing_into_nothing_leaves_nothing(home: Path, tmp_path: Path, agent: str) -> None:
    """No empty config.toml, no {} and no backup in the project: what install made, uninstall takes."""
    project = tmp_path / "proj"
    project.mkdir()
    args = ("--agent", agent, "--scope", "project", "--project-dir", str(project))
    ok(home, "install-mcp", *args)
    assert any(project.rglob("*"))
    done = ok(home, "uninstall-mcp", *args)
    assert list(project.rglob("*")) == [], (done.stdout, list(project.rglob("*")))
    assert "removed" in done.stdout


# Each agent's user file with a server and a comment of the user's own: (path under HOME, the
# key holding servers, what the agent must find in our entry).
USERS_OWN = {
    "qwen": (".qwen/settings.json", "mcpServers", {"alwaysLoadTools": True}),
    "cursor": (".cursor/mcp.json", "mcpServers", {}),
    "copilot": (".copilot/mcp-config.json", "mcpServers", {"type": "stdio"}),
    "opencode": (".config/opencode/opencode.json", "mcp", {"type": "local", "enabled": True}),
    "cline": (".cline/data/settings/cline_mcp_settings.json", "mcpServers", {}),
}


@pytest.mark.parametrize("agent", sorted(USERS_OWN))
def test_each_agents_file_gets_our_server_in_its_shape_and_back_byte_for_byte(home: Path, agent: str) -> None:
    where, key, shape = USERS_OWN[agent]
    path = home / where
    path.parent.mkdir(parents=True)
    mine = '{\n  // mine\n  "%s": {"docs": {"command": "npx", "args": ["-y", "docs-mcp"]}}\n}\n' % key
    path.write_text(mine)
    ok(home, "install-mcp", "--agent", agent)
    servers = json.loads(re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M))[key]
    entry = servers["ai-memory"]
    assert servers["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]} and shape.items() <= entry.items()
    command = entry["command"] if agent == "opencode" else [entry["command"], *entry["args"]]
    assert command[-1] == "mcp" and Path(command[0]).name in ("ai-memory", "python", "python3")
    ok(home, "uninstall-mcp", "--agent", agent)
    assert path.read_text() == mine


def test_claude_and_copilot_share_one_entry_in_a_projects_mcp_json(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    at = ("--scope", "project", "--project-dir", str(project))
    ok(home, "install-mcp", "--agent", "claude", *at)
    claudes = (project / ".mcp.json").read_bytes()
    ok(home, "install-mcp", "--agent", "copilot", *at)
    assert (project / ".mcp.json").read_bytes() == claudes  # Copilot reads Claude's entry as it is


def test_codex_toml_changes_only_our_table(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_TOML)
    ok(home, "install-mcp", "--agent", "codex")
    text = path.read_text()
    assert text.startswith(CODEX_TOML + "\n[mcp_servers.ai-memory]\n")
    doc = tomllib.loads(text)
    entry = doc["mcp_servers"]["ai-memory"]
    assert entry["args"] == ["mcp"] and "AI_MEMORY_DATA_DIR" in entry["env"]
    assert_our_command_runs(entry)
    assert doc["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
    assert doc["profiles"] == {"fast": {"model": "gpt-5-mini"}}
    installed = path.read_bytes()
    ok(home, "install-mcp", "--agent", "codex")
    assert path.read_bytes() == installed and len(settings_backups(path, home.parent / "data")) == 1
    ok(home, "uninstall-mcp", "--agent", "codex")
    assert path.read_text() == CODEX_TOML


CODEX_COMMENTED = """\
# my codex config
model = "gpt-5-codex"   # the default
approval_policy = "on-request"

# servers I use
[mcp_servers.docs]
command = "npx"
# pinned: the latest broke once
args = ["-y", "docs-mcp@1.2"]   # keep this comment
env = { DOCS_HOME = "~/.docs" }  # inline, mine

  # profiles below, indented
[profiles.fast]
model = "gpt-5-mini"
# end of file
"""


@pytest.mark.parametrize("scope", ["user", "project"])
def test_codex_comments_around_and_inside_other_tables_survive_byte_for_byte(home: Path, tmp_path: Path,
                                                                            scope: str) -> None:
    project = tmp_path / "proj"
    path = (home if scope == "user" else project) / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(CODEX_COMMENTED)
    args = ("--agent", "codex", "--scope", scope, "--project-dir", str(project))
    ok(home, "install-mcp", *args)
    text = path.read_text()
    assert text.startswith(CODEX_COMMENTED + "\n[mcp_servers.ai-memory]\n")  # only our table, added at the end
    assert tomllib.loads(text)["mcp_servers"]["ai-memory"]["args"][-1] == "mcp"
    ok(home, "install-mcp", *args)
    assert path.read_text() == text
    ok(home, "uninstall-mcp", *args)
    assert path.read_text() == CODEX_COMMENTED


def test_gemini_mcp_entry_goes_into_settings_with_comments(home: Path) -> None:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    original = '{\n  // servers\n  "mcpServers": {\n    "fs": {"command": "npx"} /* mine */\n  },\n  "ui": {"theme": "GitHub"}\n}\n'
    path.write_text(original)
    ok(home, "install-mcp", "--agent", "gemini")
    assert '  // servers\n  "mcpServers": {\n    "fs": {"command": "npx"}, /* mine */\n    "ai-memory": {' in path.read_text()
    ok(home, "uninstall-mcp", "--agent", "gemini")
    assert path.read_text() == original


def test_codex_replaces_a_stale_table_in_place_and_keeps_the_users_keys(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    path = project / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    stale = ('[mcp_servers.ai-memory]\ncommand = "/old/ai-memory"\nargs = ["mcp"]\nstartup_timeout_sec = 20\n'
             '\n[mcp_servers.ai-memory.env]\nAI_MEMORY_URL = "http://127.0.0.1:1"\n\n# the docs server\n')
    path.write_text(CODEX_TOML.replace("[mcp_servers.docs]", stale + "[mcp_servers.docs]"))
    ok(home, "install-mcp", "--agent", "codex", "--scope", "project", "--project-dir", str(project))
    doc = tomllib.loads(path.read_text())
    entry = doc["mcp_servers"]["ai-memory"]
    assert entry["startup_timeout_sec"] == 20  # the user's key, kept
    assert_portable({k: v for k, v in entry.items() if k != "startup_timeout_sec"})  # a project's: no env
    assert "# the docs server\n[mcp_servers.docs]" in path.read_text()
    assert path.read_text().startswith(CODEX_TOML.split("[mcp_servers.docs]")[0] + "[mcp_servers.ai-memory]\n")
    ok(home, "uninstall-mcp", "--agent", "codex", "--scope", "project", "--project-dir", str(project))
    left = tomllib.loads(path.read_text())
    assert "ai-memory" not in left["mcp_servers"] and left["mcp_servers"]["docs"]["command"] == "npx"
    assert "# the docs server" in path.read_text()


def test_codex_edits_an_inline_table_and_refuses_a_broken_file_in_one_line(home: Path) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('mcp_servers = { ai-memory = { command = "x" }, docs = { command = "d" } }\n')
    ok(home, "install-mcp", "--agent", "codex")
    servers = tomllib.loads(path.read_text())["mcp_servers"]
    assert servers["ai-memory"]["args"] == ["mcp"] and servers["docs"] == {"command": "d"}
    assert path.read_text().startswith("mcp_servers = { ai-memory = {")  # still inline, edited in place
    path.write_text("model = \n")
    done = cli(home, "install-mcp", "--agent", "codex")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert f"cannot parse {path}" in done.stderr and "line 1" in done.stderr
    assert path.read_text() == "model = \n" and len(settings_backups(path, home.parent / "data")) == 1


def test_gemini_keeps_other_servers_and_our_entrys_extra_keys(home: Path) -> None:
    path = home / ".gemini" / "settings.json"
    settings = {**GEMINI_SETTINGS, "mcpServers": {**GEMINI_SETTINGS["mcpServers"],
                                                  "ai-memory": {"command": "/old/bin/ai-memory", "args": ["mcp"],
                                                                "timeout": 30000}}}
    write_json(path, settings)
    ok(home, "install-mcp", "--agent", "gemini")
    doc = json.loads(path.read_text())
    entry = doc["mcpServers"]["ai-memory"]
    assert "type" not in entry and entry["timeout"] == 30000 and entry["command"] != "/old/bin/ai-memory"
    assert list(doc["mcpServers"]) == ["fs", "ai-memory"] and doc["ui"] == GEMINI_SETTINGS["ui"]
    ok(home, "uninstall-mcp", "--agent", "gemini")
    assert json.loads(path.read_text()) == GEMINI_SETTINGS


def test_dry_run_prints_a_diff_and_writes_nothing(home: Path) -> None:
    original = write_json(home / ".gemini" / "settings.json", GEMINI_SETTINGS)
    done = ok(home, "install-mcp", "--agent", "gemini", "--dry-run")
    assert '+    "ai-memory": {' in done.stdout and (home / ".gemini" / "settings.json").read_bytes() == original
    done = ok(home, "install-mcp", "--agent", "codex", "--dry-run")
    assert "+[mcp_servers.ai-memory]" in done.stdout and not (home / ".codex").exists()
    done = ok(home, "uninstall-mcp", "--agent", "claude", "--dry-run")
    assert "absent" in done.stdout and not (home / ".claude.json").exists()
    assert settings_backups(home / ".gemini" / "settings.json", home.parent / "data") == []


def test_the_default_data_dir_and_url_are_not_pinned(home: Path) -> None:
    default = home / ".local" / "share" / "ai-memory"
    ok(home, "install-mcp", "--agent", "claude", data_dir=default)
    assert "env" not in json.loads((home / ".claude.json").read_text())["mcpServers"]["ai-memory"]


def test_uninstall_touches_nothing_else_and_nothing_absent(home: Path) -> None:
    original = write_json(home / ".claude.json", CLAUDE_JSON)
    done = ok(home, "uninstall-mcp", "--agent", "claude")
    assert "unchanged" in done.stdout and (home / ".claude.json").read_bytes() == original
    done = ok(home, "uninstall-mcp", "--agent", "codex")
    assert "absent" in done.stdout and not (home / ".codex").exists()
    assert settings_backups(home / ".claude.json", home.parent / "data") == []
