"""Register ai-memory's stdio MCP server (``ai-memory mcp``) with Claude Code, Codex and Gemini CLI.

Files, by agent and scope (user: under $HOME; project: under the project root):

- Claude Code: ``~/.claude.json`` top-level ``mcpServers`` / ``.mcp.json``; project scope also
  approves the server for you in the git-ignored ``.claude/settings.local.json``
  (``enabledMcpjsonServers``), which is what Claude Code's own approval prompt records.
- Codex: a ``[mcp_servers.ai-memory]`` table in ``~/.codex/config.toml`` / ``.codex/config.toml``.
- Gemini CLI: ``mcpServers`` in ``~/.gemini/settings.json`` / ``.gemini/settings.json``.

We own one entry, named ``ai-memory``, and in it the keys ``type`` (Claude), ``command``,
``args`` and ``env`` (stdio), or the URL and headers of the daemon's ``/mcp`` (Streamable HTTP:
Claude's ``url``/``headers``, Codex's ``url``/``http_headers``, Gemini's ``httpUrl``/``headers``);
keys the user added to it (a timeout, ``trust``) and everything else in the file are kept.
At user scope the stdio command is this installation's absolute ``ai-memory``, with the data dir
and URL pinned where they are not the defaults; at project scope, in a file meant to be
committed, it is ``ai-memory mcp`` by name (``PORTABLE_SERVER``): each person's own install finds
its data dir and daemon. The HTTP form carries the caller's token in a header (none of the three
CLIs can read it from a file), so a file holding it is written 0600 and, in a project, kept out
of git. JSON files are edited in place, comments and layout kept (``jsonc_edit``, as
install-hooks does); TOML through tomlkit, which keeps every other line, comment and table, and
the result is parsed back and compared with what we meant to write, so a layout we cannot edit
safely is an error, never a corrupted file.
"""

from __future__ import annotations

import copy
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table

from ai_memory.client.agent_settings import FileChange, check_agent_and_scope, json_change, read_settings, scoped_file
from ai_memory.core.errors import ConfigError
from ai_memory.core.own_tools import SERVER_NAME
OWNED_KEYS = ("type", "command", "args", "env", "url", "httpUrl", "headers", "http_headers", "environment", "enabled",
              "alwaysLoadTools")
CLAUDE_LOCAL = ".claude/settings.local.json"
APPROVED_KEY, DENIED_KEY = "enabledMcpjsonServers", "disabledMcpjsonServers"

_FILES = {  # agent → (user file under $HOME, project file under the project root)
    "claude": (".claude.json", ".mcp.json"),
    "codex": (".codex/config.toml", ".codex/config.toml"),
    "gemini": (".gemini/settings.json", ".gemini/settings.json"),
    "qwen": (".qwen/settings.json", ".qwen/settings.json"),
    "cursor": (".cursor/mcp.json", ".cursor/mcp.json"),
    "copilot": (".copilot/mcp-config.json", ".mcp.json"),
    "opencode": (".config/opencode/opencode.json", "opencode.json"),
    "cline": (".cline/data/settings/cline_mcp_settings.json", ""),  # user scope only
}
# The key of the file's object that holds the servers by name.
_CONTAINER = {"opencode": "mcp"}
Doc = dict[str, Any]


@dataclass(frozen=True)
class ServerSpec:
    """How an agent starts the server: a command, its arguments, pinned environment."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


# A project's committed entry: ai-memory from the PATH of whoever runs the agent, nothing pinned.
PORTABLE_SERVER = ServerSpec("ai-memory", ("mcp",))


@dataclass(frozen=True)
class HttpSpec:
    """How an agent reaches the daemon's MCP endpoint: its URL and the headers to send."""

    url: str
    headers: Mapping[str, str]


@dataclass(frozen=True)
class McpTarget:
    agent: str
    scope: str
    home: Path
    project_dir: Path

    def __post_init__(self) -> None:
        check_agent_and_scope(self.agent, self.scope)
        if self.agent == "cline" and self.scope == "project":
            raise ConfigError("Cline reads MCP servers from your user settings only", detail="use --scope user")

    @property
    def path(self) -> Path:
        return scoped_file(_FILES, self.agent, self.scope, self.home, self.project_dir)


def cli_launcher(executable: Path) -> list[str]:
    """The installed ``ai-memory`` script beside the interpreter, else ``python -m ai_memory.cli``.

    Absolute, so an agent or a service manager does not depend on its PATH; the interpreter's
    path is kept as is (not resolved), since a virtualenv's ``python`` is a symlink out of the
    environment.
    """
    script = executable.absolute().parent / "ai-memory"
    if script.is_file():
        return [str(script)]
    return [str(executable.absolute()), "-m", "ai_memory.cli"]


def server_command(executable: Path) -> tuple[str, tuple[str, ...]]:
    """How an agent starts ``ai-memory mcp``: the command and its arguments."""
    command, *rest = cli_launcher(executable)
    return command, (*rest, "mcp")


def wanted_entry(agent: str, spec: ServerSpec | HttpSpec) -> Doc:
    if isinstance(spec, HttpSpec):
        return _http_entry(agent, spec)
    if agent == "opencode":  # one command array, "environment" for the variables
        entry: Doc = {"type": "local", "command": [spec.command, *spec.args], "enabled": True}
        return {**entry, "environment": dict(spec.env)} if spec.env else entry
    # Copilot CLI reads Claude Code's form too, and the two share a project's .mcp.json: one entry
    # serves both (its tools all offered, as Copilot does without a "tools" list).
    entry = {"type": "stdio"} if agent in ("claude", "copilot") else {}
    entry.update(command=spec.command, args=list(spec.args))
    if spec.env:
        entry["env"] = dict(spec.env)
    if agent == "qwen":
        entry["alwaysLoadTools"] = True  # else Qwen Code hides them behind its tool_search tool
    return entry


def _http_entry(agent: str, spec: HttpSpec) -> Doc:
    headers = dict(spec.headers)
    if agent in ("claude", "copilot"):
        return {"type": "http", "url": spec.url, "headers": headers}
    if agent == "codex":
        return {"url": spec.url, "http_headers": headers}
    if agent == "opencode":
        return {"type": "remote", "url": spec.url, "headers": headers, "enabled": True}
    if agent in ("cursor", "cline"):
        return {"url": spec.url, "headers": headers, **({"type": "streamableHttp"} if agent == "cline" else {})}
    return {"httpUrl": spec.url, "headers": headers}  # Gemini CLI, Qwen Code: url is their SSE transport


def merged_entry(current: Any, wanted: Doc) -> Doc:
    """Our keys from ``wanted``, the user's own keys of the existing entry kept in place."""
    if not isinstance(current, dict):
        return dict(wanted)
    merged = {k: wanted.get(k, v) for k, v in current.items() if k in wanted or k not in OWNED_KEYS}
    merged.update((k, v) for k, v in wanted.items() if k not in merged)
    return merged


# ---- JSON files (Claude Code, Gemini CLI) ---------------------------------------------------

def _container(agent: str) -> str:
    return _CONTAINER.get(agent, "mcpServers")


def _servers(doc: Doc, path: Path, key: str) -> dict[str, Any]:
    servers = doc.get(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f'"{key}" in {path} is not a JSON object')
    return servers


def _install_json(target: McpTarget, spec: ServerSpec | HttpSpec) -> FileChange:
    path = target.path
    before, doc = read_settings(path)
    key = _container(target.agent)
    servers = _servers(doc, path, key)
    entry = merged_entry(servers.get(SERVER_NAME), wanted_entry(target.agent, spec))
    new = {**doc, key: {**servers, SERVER_NAME: entry}}
    # ~/.claude.json also holds account and project state: keep it private like Claude Code does.
    private = isinstance(spec, HttpSpec) or (target.agent == "claude" and target.scope == "user")
    return _with_token(json_change(path, before, doc, new, private=private), target, spec)


def _with_token(change: FileChange, target: McpTarget, spec: ServerSpec | HttpSpec) -> FileChange:
    """A file that holds a token: 0600, and never committed from a project."""
    if not isinstance(spec, HttpSpec):
        return change
    return replace(change, private=True, git_local=change.git_local or target.scope == "project")


def _uninstall_json(target: McpTarget) -> FileChange:
    path = target.path
    before, doc = read_settings(path)
    if before is None:
        return FileChange(path, None, None)
    key = _container(target.agent)
    servers = _servers(doc, path, key)
    rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
    new = {k: v for k, v in doc.items() if k != key or rest}
    if rest:
        new[key] = rest
    return json_change(path, before, doc, new if SERVER_NAME in servers else doc)


def _approval(target: McpTarget, approve: bool) -> FileChange:
    """Claude Code project scope: add or drop our name in ``enabledMcpjsonServers``."""
    path = target.project_dir / CLAUDE_LOCAL
    before, doc = read_settings(path)
    if before is None and not approve:
        return FileChange(path, None, None)
    names = doc.get(APPROVED_KEY, [])
    if not isinstance(names, list):
        raise ConfigError(f'"{APPROVED_KEY}" in {path} is not a list')
    if approve:
        new = doc if SERVER_NAME in names else {**doc, APPROVED_KEY: [*names, SERVER_NAME]}
    elif SERVER_NAME not in names:
        new = doc
    elif len(names) > 1:
        new = {**doc, APPROVED_KEY: [n for n in names if n != SERVER_NAME]}
    else:
        new = {k: v for k, v in doc.items() if k != APPROVED_KEY}
    notes: tuple[str, ...] = ()
    denied = doc.get(DENIED_KEY)
    if approve and isinstance(denied, list) and SERVER_NAME in denied:
        notes = (f'{path} lists "{SERVER_NAME}" in {DENIED_KEY}: remove it there to let Claude Code start it',)
    change = json_change(path, before, doc, new)
    return FileChange(change.path, change.before, change.after, change.private, notes, git_local=True)


# ---- TOML (Codex) ---------------------------------------------------------------------------

def edit_toml(text: str | None, entry: Doc | None, path: Path) -> str | None:
    """``text`` with our table set to ``entry`` (None: removed); None when nothing changes.
    tomlkit keeps every other line, comment and table as it was, and the result must parse to
    the old document with only our entry changed."""
    source = text or ""
    try:
        doc = tomlkit.parse(source)
    except TOMLKitError as exc:
        raise ConfigError(f"cannot parse {path}: {' '.join(str(exc).split())}", detail="fix or move it first") from exc
    old = doc.unwrap()
    servers = old.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"mcp_servers in {path} is not a table")
    current = servers.get(SERVER_NAME)
    if entry is not None:
        entry = merged_entry(current, entry)
    if current == entry:
        return None
    new = _with_entry(doc, source, entry) if entry is not None else _without_entry(doc, source)
    if new.endswith("\n\n") and not source.endswith("\n\n"):
        new = new[:-1]  # no blank line left at the end by a table added or taken away there
    _check_toml(new, old, entry, path)
    return new


def _with_entry(doc: tomlkit.TOMLDocument, source: str, entry: Doc) -> str:
    """Our table updated in place, else added: inside an explicit ``[mcp_servers]`` or inline
    table, else at the end of the file (after every other table, so no comment that opens the
    next table is parted from it)."""
    servers = doc.get("mcp_servers")
    if servers is not None and SERVER_NAME in servers:
        _update(servers[SERVER_NAME], entry, owned=OWNED_KEYS)
        return tomlkit.dumps(doc)
    if servers is not None and not (isinstance(servers, Table) and servers.is_super_table()):
        servers[SERVER_NAME] = _toml_item(entry) if isinstance(servers, InlineTable) else _new_table(entry)
        return tomlkit.dumps(doc)
    block = tomlkit.document()
    block["mcp_servers"] = tomlkit.table(is_super_table=True)
    block["mcp_servers"][SERVER_NAME] = _new_table(entry)
    if not source:
        return tomlkit.dumps(block)
    return source + ("" if source.endswith("\n") else "\n") + "\n" + tomlkit.dumps(block)


def _new_table(entry: Doc) -> Table:
    table = tomlkit.table()
    table.update({key: _toml_item(value) for key, value in entry.items()})
    return table


def _without_entry(doc: tomlkit.TOMLDocument, source: str) -> str:
    """Our table taken out (and ``mcp_servers`` with it when only tables made it, now none);
    the comments that closed it stay where they were, before what follows."""
    servers = doc["mcp_servers"]
    closing = _closing_comments(servers[SERVER_NAME])
    del servers[SERVER_NAME]
    if not servers and isinstance(servers, Table) and servers.is_super_table():
        del doc["mcp_servers"]
    text = tomlkit.dumps(doc)
    if closing:  # everything before our table is unchanged: put them back where the texts part
        cut = text.rfind("\n", 0, len(os.path.commonprefix([source, text]))) + 1
        text = text[:cut] + "".join(line + "\n" for line in closing) + text[cut:]
    return text


def _update(table: Any, wanted: Doc, owned: tuple[str, ...] | None = None) -> None:
    """``table`` (tomlkit's, inline or not) holding ``wanted``: keys changed in place, ours
    that are no longer wanted removed. A mapping whose keys change is written inline
    (``env = { ... }``): keys added to a ``[...env]`` table would land after its closing comments."""
    for key in [k for k in table if k not in wanted and (owned is None or k in owned)]:
        _replace(table, key, None)
    for key, value in wanted.items():
        current = table.get(key)
        if isinstance(value, dict) and isinstance(current, dict) and (
                isinstance(current, InlineTable) or set(current) == set(value)):
            _update(current, value)
        elif isinstance(current, Table):
            _replace(table, key, _toml_item(value))
        elif current != value:
            table[key] = _toml_item(value)


def _replace(table: Any, key: str, item: Any) -> None:
    """``table[key]`` replaced by ``item`` (None: removed); the comments that closed a sub-table
    there introduce what follows it, so they stay at the end of ``table``."""
    closing = _closing_comments(table[key])
    if item is None:
        del table[key]
    else:
        table[key] = item
    for line in closing:
        table.add(tomlkit.comment(line.lstrip().removeprefix("#").strip()) if line.strip() else tomlkit.nl())


def _closing_comments(item: Any) -> list[str]:
    """The comment lines a table ends with, after its last key: tomlkit counts them as the
    table's own, though they speak of what follows."""
    if not isinstance(item, Table):
        return []
    lines = item.as_string().splitlines()
    closing: list[str] = []
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        closing.insert(0, lines.pop())
    while closing and not closing[0].strip():
        closing.pop(0)
    return closing


def _toml_item(value: Any) -> Any:
    """A value as we write it: a mapping inline (``env = { ... }``), the rest as tomlkit does."""
    if not isinstance(value, dict):
        return value
    inline = tomlkit.inline_table()
    inline.update(value)
    return inline


def _check_toml(new: str, old: Doc, entry: Doc | None, path: Path) -> None:
    """The edited text must parse to the old document with only our entry changed."""
    expected = copy.deepcopy(old)
    servers = expected.setdefault("mcp_servers", {})
    servers.pop(SERVER_NAME, None)
    if entry is not None:
        servers[SERVER_NAME] = entry
    try:
        got = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        got = None
    if got is not None and not got.get("mcp_servers", {}) and not servers:
        got.pop("mcp_servers", None)
        expected.pop("mcp_servers", None)
    if got != expected:
        raise ConfigError(f"cannot edit {path} safely (its layout around mcp_servers is unusual)",
                          detail=f"edit the [mcp_servers.{SERVER_NAME}] table by hand")


def _toml_change(target: McpTarget, entry: Doc | None, private: bool = False) -> FileChange:
    path = target.path
    try:
        with path.open(encoding="utf-8", newline="") as fh:  # keep line endings byte for byte
            before: str | None = fh.read()
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}", detail=str(exc)) from exc
    if before is None and entry is None:
        return FileChange(path, None, None)
    new = edit_toml(before, entry, path)
    return FileChange(path, before, before if new is None else new, private)


# ---- plans ----------------------------------------------------------------------------------

def plan_install(target: McpTarget, spec: ServerSpec | HttpSpec) -> list[FileChange]:
    """The file changes that register our server; nothing is written."""
    if target.agent == "codex":
        change = _toml_change(target, wanted_entry("codex", spec), private=isinstance(spec, HttpSpec))
        return [_with_token(change, target, spec)]
    changes = [_install_json(target, spec)]
    if target.agent == "claude" and target.scope == "project":
        changes.append(_approval(target, approve=True))
    return changes


def plan_uninstall(target: McpTarget) -> list[FileChange]:
    """The file changes that remove our server and nothing else; absent files stay absent."""
    if target.agent == "codex":
        return [_toml_change(target, None)]
    changes = [_uninstall_json(target)]
    if target.agent == "claude" and target.scope == "project":
        changes.append(_approval(target, approve=False))
    return changes
