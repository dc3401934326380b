"""Agent settings files: merge ai-memory's hooks into Claude Code, Codex and Gemini CLI settings.

Every agent nests hooks the same way: event → matcher groups → handlers. Every handler we
install runs the spool-first shell client, so capture never depends on the daemon being up: at
user scope by its absolute path (``<data_dir>/bin/ai-memory-hook --data-dir D AGENT EVENT``, the
fastest form); at project scope, in files meant to be committed, through ``ai-memory`` found on
each person's PATH (``ai-memory hook --agent A --event E`` execs the packaged client before
argparse loads), so the file holds no path of this machine and each person's own install finds
its data dir and daemon; where ``ai-memory`` is not on PATH the hook reads its input and does
nothing (``PORTABLE_HOOK``). Claude Code's capture handlers are
``async`` (it never waits for them), its SessionStart, Stop and SessionEnd run in the
foreground (the briefing must be printed; a ``-p`` run kills async hooks as it ends, and Stop
and SessionEnd are what end it). No setting carries the port (the
client finds the daemon through the data dir's endpoint record) or the token (the client reads
the data dir's token file).

We only ever touch *our* handlers (a command running ``ai-memory-hook`` or ``ai-memory hook``,
either form, any install's; an http handler that older versions installed, posting to ``/hook``
or carrying ``AI_MEMORY_TOKEN``): install replaces them in place or appends one matcher group
per event, uninstall removes them and
whatever group, event or ``hooks`` object that removal left empty, and both remove what older
versions added for http hooks (the token in ``env``, allow-list entries). Everything else —
other keys, other groups, other handlers, key order, comments — survives byte for byte
(``jsonc_edit``), so a second install is a no-op and uninstall gives back the user's file.

Planning is pure (``plan_install``/``plan_uninstall`` return ``FileChange``s);
``settings_backup.apply_changes`` writes them, with backups in the data dir.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ai_memory.client import jsonc_edit
from ai_memory.client.hook_script import HOOK_CLIENT, hook_client_path
from ai_memory.core.errors import ConfigError, StorageError

# Package data: the top-level hooks/ is installed as ai_memory.hooks (pyproject.toml), so a wheel
# carries it; read through importlib.resources, never through a checkout path.
HOOK_SOURCE: Traversable = resources.files("ai_memory.hooks") / HOOK_CLIENT
# Agents whose settings nest hooks as event → matcher groups → handlers (this module); the others
# take their hooks as files (``hook_files``).
NESTED_AGENTS = ("claude", "codex", "gemini", "qwen")
AGENTS = (*NESTED_AGENTS, "cursor", "copilot", "opencode", "cline")
SCOPES = ("user", "project")
TOKEN_ENV = "AI_MEMORY_TOKEN"

# One hook per tool call, after it: the Post event carries the input as well as the result, and
# each hook is a process the agent starts (a Pre hook doubled that cost for the start time alone).
CLAUDE_EVENTS = (
    "SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PreCompact",
    "PostCompact", "Notification", "Stop", "SubagentStart", "SubagentStop", "SessionEnd",
)
# Every other Claude handler is async. SessionStart prints the briefing and UserPromptSubmit what
# memory holds for the prompt (prompt recall: at most 0.5 s, nothing while the daemon is down);
# Stop and SessionEnd end a `claude -p` run, which kills async hooks still running (a real run
# lost every async Stop).
CLAUDE_FOREGROUND = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
CODEX_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "PostCompact", "Stop",
                "SessionEnd")
# No PreCompress: Gemini CLI fires it before every model turn, with nothing but a trigger, so it
# says nothing about a compression having happened.
GEMINI_EVENTS = ("SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "AfterTool", "Notification")
QWEN_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PreCompact", "Notification",
               "Stop", "SubagentStart", "SubagentStop", "SessionEnd")
CAPTURE_TIMEOUT_S = 5
START_TIMEOUT_S = 10
CODEX_END_TIMEOUT_S = 3  # Codex caps SessionEnd hooks at 3 s and warns about a longer timeout
GEMINI_NAME = "ai-memory"

_FILES = {  # agent → (user file under $HOME, project file under the project dir)
    "claude": (".claude/settings.json", ".claude/settings.json"),
    "codex": (".codex/hooks.json", ".codex/hooks.json"),
    "gemini": (".gemini/settings.json", ".gemini/settings.json"),
    "qwen": (".qwen/settings.json", ".qwen/settings.json"),
}
CLAUDE_LOCAL = ".claude/settings.local.json"

Handler = dict[str, Any]
Doc = dict[str, Any]
_TOKEN_VALUE = re.compile(rf'("{TOKEN_ENV}"\s*:\s*)"(?:[^"\\]|\\.)*"')
# A project's committed hook: ai-memory from the PATH of whoever runs the agent; without it, the
# payload is read (an agent writing a large one must not meet a closed pipe) and nothing else
# happens, exit 0. Every agent runs a command through a shell (Claude Code sh -c, Codex
# $SHELL -lc, Gemini CLI bash -c); `&&`, `;` and `exec` mean the same in sh, bash, zsh and fish.
PORTABLE_HOOK = ("command -v ai-memory >/dev/null 2>&1 && exec ai-memory hook --agent {agent} --event {event}; "
                 "cat >/dev/null")
_RUNS_OUR_CLI = re.compile(r"(?:^|[\s/;&|])ai-memory hook --agent ")


def check_agent_and_scope(agent: str, scope: str) -> None:
    if agent not in AGENTS:
        raise ConfigError(f"unknown agent {agent!r}", detail=f"choose {', '.join(AGENTS)}")
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {scope!r}", detail=f"choose {', '.join(SCOPES)}")


def scoped_file(files: dict[str, tuple[str, str]], agent: str, scope: str, home: Path, project_dir: Path) -> Path:
    """The agent's file for a scope: ``files[agent]`` is (under $HOME, under the project dir)."""
    user, project = files[agent]
    return home / user if scope == "user" else project_dir / project


@dataclass(frozen=True)
class Target:
    """Where and what to install: the agent, the scope and the daemon's coordinates."""

    agent: str
    scope: str
    home: Path
    project_dir: Path
    url: str
    data_dir: Path

    def __post_init__(self) -> None:
        check_agent_and_scope(self.agent, self.scope)

    @property
    def settings_path(self) -> Path:
        return scoped_file(_FILES, self.agent, self.scope, self.home, self.project_dir)

    @property
    def hook_command(self) -> Path:
        return hook_client_path(self.data_dir)


@dataclass(frozen=True)
class FileChange:
    """One settings file before and after; ``before`` is None when the file does not exist."""

    path: Path
    before: str | None
    after: str | None  # None: leave the file alone
    private: bool = False  # written with mode 0600
    notes: tuple[str, ...] = ()  # what the user should know about this file
    git_local: bool = False  # a project's local file: it and its backups are kept out of git
    executable: bool = False  # a script an agent runs (mode 0755)

    @property
    def changed(self) -> bool:
        return self.after is not None and self.after != self.before


def install_hook_client(data_dir: Path, source: Traversable = HOOK_SOURCE) -> Path | None:
    """Copy the shell hook client to ``<data_dir>/bin``; None (writing nothing) if it is missing.
    Replaced atomically: an agent may be running the old copy at this moment."""
    dest = hook_client_path(data_dir)
    try:
        if not source.is_file():
            return None
        script = source.read_bytes()
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not dest.exists() or dest.read_bytes() != script:
            _write_bytes_atomic(dest, script, 0o755)
        dest.chmod(0o755)
    except OSError as exc:
        raise StorageError(f"cannot install the hook client at {dest}", detail=str(exc)) from exc
    return dest


# ---- what our handlers look like ------------------------------------------------------------

def hook_command(target: Target, event: str) -> str:
    """The shell command an agent runs for ``event``: at user scope the client itself, pinned to
    our data dir; at project scope ``ai-memory`` by name, portable to every teammate's machine."""
    if target.scope == "project":
        return PORTABLE_HOOK.format(agent=target.agent, event=event)
    return (f"{shlex.quote(str(target.hook_command))} --data-dir {shlex.quote(str(target.data_dir))} "
            f"{target.agent} {event}")


def timeout_s(agent: str, event: str) -> int:
    """Seconds an agent may give our hook for ``event``: a session's start waits for the briefing."""
    if event in ("SessionStart", "sessionStart"):
        return START_TIMEOUT_S
    return CODEX_END_TIMEOUT_S if (agent, event) == ("codex", "SessionEnd") else CAPTURE_TIMEOUT_S


def wanted_handlers(target: Target) -> dict[str, Handler]:
    """Event name → the one handler ai-memory wants there, for ``target.agent``."""
    events = {"claude": CLAUDE_EVENTS, "codex": CODEX_EVENTS, "gemini": GEMINI_EVENTS, "qwen": QWEN_EVENTS}[target.agent]
    wanted: dict[str, Handler] = {}
    for event in events:
        handler: Handler = {"type": "command", "command": hook_command(target, event)}
        if target.agent == "gemini":
            handler.update(name=GEMINI_NAME, timeout=1000 * timeout_s("gemini", event))  # milliseconds
        else:
            handler["timeout"] = timeout_s(target.agent, event)
        if target.agent == "claude" and event not in CLAUDE_FOREGROUND:
            handler["async"] = True
        wanted[event] = handler
    return wanted


def is_ours(handler: Any, url: str) -> bool:
    """True for a handler an ai-memory install wrote (whatever port or data dir it used then)."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    if isinstance(command, str) and (HOOK_CLIENT in command or runs_our_cli(command)):
        return True
    return is_legacy_http(handler, url)


def runs_our_cli(command: str) -> bool:
    """A handler in the portable form (``ai-memory hook --agent ...``), any install's."""
    return bool(_RUNS_OUR_CLI.search(command))


def is_legacy_http(handler: Any, url: str) -> bool:
    """An http handler of an older install: it lost every event while the daemon was down."""
    if not isinstance(handler, dict) or handler.get("type") != "http":
        return False
    allowed = handler.get("allowedEnvVars")
    return str(handler.get("url", "")).startswith(f"{url}/hook?") or (
        isinstance(allowed, list) and TOKEN_ENV in allowed)


# Allow-list entries older installs added for their http hooks, on whatever loopback port.
_LEGACY_ALLOWED_URL = re.compile(r"^https?://(?:127\.0\.0\.1|localhost|\[::1\]):\d+/hook\*$")


# ---- pure merges ----------------------------------------------------------------------------

def merge_hooks(doc: Doc, wanted: dict[str, Handler], ours: Callable[[Any], bool]) -> Doc:
    """``doc`` with exactly ``wanted`` as our handlers (``{}`` removes them all)."""
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("the settings file's \"hooks\" is not a JSON object")
    merged: Doc = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):  # e.g. Gemini's legacy "enabled": true; not ours
            merged[event] = groups
            continue
        new_groups = _merge_event(groups, wanted.get(event), ours)
        if new_groups or not groups:
            merged[event] = new_groups
    for event, handler in wanted.items():
        if event not in merged:
            merged[event] = [{"hooks": [handler]}]
    out = dict(doc)
    if merged or (not hooks and "hooks" in doc):
        out["hooks"] = merged
    else:
        out.pop("hooks", None)
    return out


def _merge_event(groups: list[Any], handler: Handler | None,
                 ours: Callable[[Any], bool]) -> list[Any]:
    """One event's groups with our first handler replaced in place and any others dropped."""
    placed = False
    result: list[Any] = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            result.append(group)
            continue
        kept: list[Any] = []
        for item in group["hooks"]:
            if not ours(item):
                kept.append(item)
            elif handler is not None and not placed:
                kept.append(handler)
                placed = True
        if kept or not group["hooks"]:
            result.append({**group, "hooks": kept})
    if handler is not None and not placed:
        result.append({"hooks": [handler]})
    return result


def _set_in(doc: Doc, section: str, key: str, value: Any) -> Doc:
    """``doc[section][key] = value``, keeping every other key of ``section`` and their order."""
    current = doc.get(section, {})
    if not isinstance(current, dict):
        raise ConfigError(f"the settings file's \"{section}\" is not a JSON object")
    return {**doc, section: {**current, key: value}}


def _unset_in(doc: Doc, section: str, key: str) -> Doc:
    """Remove ``doc[section][key]``; drop ``section`` if that removal left it empty."""
    current = doc.get(section)
    if not isinstance(current, dict) or key not in current:
        return doc
    rest = {k: v for k, v in current.items() if k != key}
    out = dict(doc)
    if rest:
        out[section] = rest
    else:
        del out[section]
    return out


def _drop_from_list(doc: Doc, key: str, drop: Callable[[Any], bool]) -> Doc:
    current = doc.get(key)
    if isinstance(current, list) and any(drop(v) for v in current):
        return {**doc, key: [v for v in current if not drop(v)]}
    return doc


def _without_legacy_http(doc: Doc) -> Doc:
    """Claude settings without what older installs added for http hooks (and the token)."""
    out = _drop_from_list(doc, "allowedHttpHookUrls", lambda v: isinstance(v, str) and bool(_LEGACY_ALLOWED_URL.match(v)))
    out = _drop_from_list(out, "httpHookAllowedEnvVars", lambda v: v == TOKEN_ENV)
    return _unset_in(out, "env", TOKEN_ENV)


# ---- per-agent documents --------------------------------------------------------------------

def install_doc(doc: Doc, target: Target) -> Doc:
    """The agent's main settings file with our hooks."""
    out = merge_hooks(doc, wanted_handlers(target), lambda h: is_ours(h, target.url))
    if target.agent == "claude":
        out = _without_legacy_http(out)
    elif target.agent == "gemini":
        out = _set_in(out, "hooksConfig", "enabled", True)
    return out


def uninstall_doc(doc: Doc, target: Target) -> Doc:
    """The agent's main settings file without anything ai-memory put there."""
    out = merge_hooks(doc, {}, lambda h: is_ours(h, target.url))
    if target.agent == "claude":
        out = _without_legacy_http(out)
    elif target.agent == "gemini" and "hooks" not in out and \
            isinstance(out.get("hooksConfig"), dict) and out["hooksConfig"].get("enabled") is True:
        out = _unset_in(out, "hooksConfig", "enabled")  # no hooks left: the flag is moot
    return out


def install_notes(doc: Doc, target: Target) -> tuple[str, ...]:
    """What the user must know about installing into ``doc`` (settings that override ours)."""
    notes = []
    path = target.settings_path
    if target.agent == "claude" and doc.get("disableAllHooks") is True:
        notes.append(f"{path} sets disableAllHooks: no hook runs until it is removed")
    config = doc.get("hooksConfig")
    if target.agent == "gemini" and isinstance(config, dict) and config.get("enabled") is False:
        notes.append(f"{path} had hooksConfig.enabled = false; set it to true for ai-memory")
    return tuple(notes)


def plan_install(target: Target) -> list[FileChange]:
    """The file changes that install our hooks; nothing is written."""
    main_path = target.settings_path
    before, doc = read_settings(main_path)
    changes = [json_change(main_path, before, doc, install_doc(doc, target), False, install_notes(doc, target))]
    return changes + _legacy_local(target)


def plan_uninstall(target: Target) -> list[FileChange]:
    """The file changes that remove our hooks; files that do not exist are left alone."""
    before, doc = read_settings(target.settings_path)
    main = (json_change(target.settings_path, before, doc, uninstall_doc(doc, target), False) if before is not None
            else FileChange(target.settings_path, None, None))
    return [main] + _legacy_local(target)


def _legacy_local(target: Target) -> list[FileChange]:
    """Claude project scope: older installs put the token in ``.claude/settings.local.json``."""
    if target.agent != "claude" or target.scope != "project":
        return []
    local = target.project_dir / CLAUDE_LOCAL
    before, doc = read_settings(local)
    if before is None:
        return []
    change = json_change(local, before, doc, _unset_in(doc, "env", TOKEN_ENV), False)
    return [replace(change, git_local=True)]


def json_change(path: Path, before: str | None, old: Doc, new: Doc, private: bool = False,
                notes: tuple[str, ...] = ()) -> FileChange:
    """A JSON settings file from ``old`` to ``new``: edited in place (``jsonc_edit``), rendered
    when new or empty, its bytes kept when nothing changes."""
    if before is not None and new == old:  # nothing to do: keep the user's bytes
        return FileChange(path, before, before, private, notes)
    after = jsonc_edit.edit(before, new, path) if before and before.strip() else jsonc_edit.render(new)
    return FileChange(path, before, after, private, notes)


# ---- files ----------------------------------------------------------------------------------

def read_settings(path: Path) -> tuple[str | None, Doc]:
    """The file's text, line endings kept (None if absent), and its JSON object ({} for an empty
    file); comments are allowed (``jsonc_edit.parse``)."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            text = fh.read()
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}", detail=str(exc)) from exc
    if not text.strip():
        return text, {}
    doc = jsonc_edit.parse(text, path)
    if not isinstance(doc, dict):
        raise ConfigError(f"{path} does not hold a JSON object")
    return text, doc


def unified_diff(change: FileChange) -> str:
    """A unified diff of the change, with the token's value masked on both sides."""
    before = _redact(change.before or "")
    after = _redact(change.after if change.after is not None else change.before or "")
    name = str(change.path)
    return "".join(difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=name if change.before is not None else "/dev/null", tofile=name))


def _redact(text: str) -> str:
    return _TOKEN_VALUE.sub(r'\1"<redacted>"', text)


def write_atomic(path: Path, text: str, private: bool, executable: bool = False) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = 0o600 if private else (path.stat().st_mode & 0o777 if path.exists() else 0o644)
        mode |= 0o111 & (mode >> 2) if executable else 0  # x wherever r is
        _write_bytes_atomic(path, text.encode("utf-8"), mode)
    except OSError as exc:
        raise StorageError(f"cannot write {path}", detail=str(exc)) from exc


def _write_bytes_atomic(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
