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
The HTTP form carries the caller's token in a header (none of the three CLIs can read it from
a file), so a file holding it is written 0600 and, in a project, kept out of git. JSON files are re-rendered with their values and key order intact (as
install-hooks does). TOML is edited as text: only our table's lines change, the rest stays
byte-identical, and the result is parsed back and compared with what we meant to write, so
a layout we cannot edit safely is an error, never a corrupted file.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ai_memory.client.agent_settings import (
    FileChange, check_agent_and_scope, read_settings, render, scoped_file,
)
from ai_memory.core.errors import ConfigError
from ai_memory.core.own_tools import SERVER_NAME
OWNED_KEYS = ("type", "command", "args", "env", "url", "httpUrl", "headers", "http_headers")
CLAUDE_LOCAL = ".claude/settings.local.json"
APPROVED_KEY, DENIED_KEY = "enabledMcpjsonServers", "disabledMcpjsonServers"

_FILES = {  # agent → (user file under $HOME, project file under the project root)
    "claude": (".claude.json", ".mcp.json"),
    "codex": (".codex/config.toml", ".codex/config.toml"),
    "gemini": (".gemini/settings.json", ".gemini/settings.json"),
}
Doc = dict[str, Any]


@dataclass(frozen=True)
class ServerSpec:
    """How an agent starts the server: an absolute command, its arguments, pinned environment."""

    command: str
    args: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


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
    entry: Doc = {"type": "stdio"} if agent == "claude" else {}
    entry.update(command=spec.command, args=list(spec.args))
    if spec.env:
        entry["env"] = dict(spec.env)
    return entry


def _http_entry(agent: str, spec: HttpSpec) -> Doc:
    headers = dict(spec.headers)
    if agent == "claude":
        return {"type": "http", "url": spec.url, "headers": headers}
    if agent == "codex":
        return {"url": spec.url, "http_headers": headers}
    return {"httpUrl": spec.url, "headers": headers}  # Gemini CLI: url is its SSE transport


def merged_entry(current: Any, wanted: Doc) -> Doc:
    """Our keys from ``wanted``, the user's own keys of the existing entry kept in place."""
    if not isinstance(current, dict):
        return dict(wanted)
    merged = {k: wanted.get(k, v) for k, v in current.items() if k in wanted or k not in OWNED_KEYS}
    merged.update((k, v) for k, v in wanted.items() if k not in merged)
    return merged


# ---- JSON files (Claude Code, Gemini CLI) ---------------------------------------------------

def _servers(doc: Doc, path: Path) -> dict[str, Any]:
    servers = doc.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f'"mcpServers" in {path} is not a JSON object')
    return servers


def _json_change(path: Path, before: str | None, old: Doc, new: Doc, private: bool = False) -> FileChange:
    if before is not None and new == old:  # nothing to do: keep the user's bytes
        return FileChange(path, before, before)
    return FileChange(path, before, render(new), private)


def _install_json(target: McpTarget, spec: ServerSpec | HttpSpec) -> FileChange:
    path = target.path
    before, doc = read_settings(path)
    servers = _servers(doc, path)
    entry = merged_entry(servers.get(SERVER_NAME), wanted_entry(target.agent, spec))
    new = {**doc, "mcpServers": {**servers, SERVER_NAME: entry}}
    # ~/.claude.json also holds account and project state: keep it private like Claude Code does.
    private = isinstance(spec, HttpSpec) or (target.agent == "claude" and target.scope == "user")
    return _with_token(_json_change(path, before, doc, new, private=private), target, spec)


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
    servers = _servers(doc, path)
    rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
    new = {k: v for k, v in doc.items() if k != "mcpServers" or rest}
    if rest:
        new["mcpServers"] = rest
    return _json_change(path, before, doc, new if SERVER_NAME in servers else doc)


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
    change = _json_change(path, before, doc, new)
    return FileChange(change.path, change.before, change.after, change.private, notes, git_local=True)


# ---- TOML (Codex) ---------------------------------------------------------------------------

_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_HEADER = re.compile(rf"^[ \t]*\[\[?[ \t]*({_KEY}(?:[ \t]*\.[ \t]*{_KEY})*)[ \t]*\]\]?[ \t]*(?:#.*)?$")
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key_path(header: str) -> tuple[str, ...]:
    parts = re.findall(_KEY, header)
    return tuple(tomllib.loads(f"k = {p}")["k"] if p[0] in "\"'" else p for p in parts)


def _our_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each ``[mcp_servers.ai-memory…]`` section, ending after its last key line."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    last_content = offset = 0
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line.rstrip("\r\n"))
        if header:
            if start is not None:
                spans.append((start, last_content))
            ours = _key_path(header.group(1))[:2] == ("mcp_servers", SERVER_NAME)
            start = offset if ours else None
        offset += len(line)
        if line.strip() and not line.lstrip().startswith("#"):
            last_content = offset  # comments and blank lines at a section's end go with the next one
    if start is not None:
        spans.append((start, last_content))
    return spans


def toml_string(value: str) -> str:
    """A TOML basic string: quotes, backslashes and every control character escaped."""
    named = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    return '"' + "".join(named.get(c) or (f"\\u{ord(c):04X}" if ord(c) < 32 or ord(c) == 127 else c)
                         for c in value) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise ConfigError(f"cannot write a {type(value).__name__} value into TOML", detail=repr(value)[:80])


def _toml_key(key: str) -> str:
    return key if _BARE.match(key) else toml_string(key)


def toml_table(entry: Doc) -> str:
    lines = [f"[mcp_servers.{_toml_key(SERVER_NAME)}]"]
    lines += [f"{_toml_key(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def _cut(text: str, start: int, end: int, insert: str = "") -> str:
    before, after = text[:start], text[end:]
    if insert:
        return before + insert + after
    if not after.strip("\n"):  # the last section: drop the blank line that set it apart
        return before[:-1] if before.endswith("\n\n") else before
    if after.startswith("\n") and (not before or before.endswith("\n\n")):
        after = after[1:]  # between sections: keep one blank line, not two
    return before + after


def edit_toml(text: str | None, entry: Doc | None, path: Path) -> str | None:
    """``text`` with our table set to ``entry`` (None: removed); None when nothing changes."""
    source = text or ""
    try:
        doc = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot parse {path}; fix or move it first", detail=str(exc)) from exc
    servers = doc.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"mcp_servers in {path} is not a table")
    current = servers.get(SERVER_NAME)
    if entry is not None:
        entry = merged_entry(current, entry)
    if current == entry:
        return None
    spans = _our_spans(source)
    if current is not None and not spans:
        raise ConfigError(f"{path} defines mcp_servers.{SERVER_NAME} inline or with dotted keys",
                          detail=f"rewrite it as a [mcp_servers.{SERVER_NAME}] table, or remove it, then re-run")
    new = source
    for start, end in reversed(spans[1:] if entry is not None else spans):
        new = _cut(new, start, end)
    if entry is not None and spans:
        new = _cut(new, spans[0][0], spans[0][1], toml_table(entry))
    elif entry is not None:
        new = (new if not new or new.endswith("\n") else new + "\n") + ("\n" if new else "") + toml_table(entry)
    _check_toml(new, doc, entry, path)
    return new


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
