"""Hooks of the agents that do not nest them in a settings file like Claude Code's.

- Cursor: ``hooks.json`` (``~/.cursor`` or the project's ``.cursor``), ``{"version": 1, "hooks":
  {event: [{"command": ...}]}}``, a flat list per event, shared with the user's own hooks: ours
  are replaced in place or appended, everything else kept byte for byte (``jsonc_edit``).
- GitHub Copilot CLI: a hooks file of ai-memory's own, ``ai-memory.json``, in the folder Copilot
  reads every file of (``~/.copilot/hooks`` or the project's ``.github/hooks``).
- Cline: one executable per event, named after it, in Cline's hooks folder (``~/Documents/Cline/
  Hooks`` or the project's ``.clinerules/hooks``); each is a two-line script of ours.
- OpenCode: a plugin of ours, ``ai-memory.js``, in ``~/.config/opencode/plugins`` or the
  project's ``.opencode/plugins``; it hands each event to the same hook command.

Every one runs the same command as the nested agents' hooks (``agent_settings.hook_command``),
so capture is spool-first whatever the agent. A file of ours is recognised by what it runs; a
file of the same name that is not ours is never overwritten or removed (a ConfigError says so).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ai_memory.client.agent_settings import (
    HOOK_CLIENT, FileChange, Target, hook_command, is_ours, json_change, read_settings, runs_our_cli, timeout_s,
)
from ai_memory.core.errors import ConfigError, StorageError

CURSOR_EVENTS = ("sessionStart", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure", "afterAgentResponse",
                 "preCompact", "sessionEnd")
COPILOT_EVENTS = ("sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure", "agentStop", "preCompact",
                  "sessionEnd")
# Cline 3.0.65 runs TaskStart, TaskComplete, TaskError and SessionShutdown detached (their output
# is ignored), and never fires UserPromptSubmit, TaskResume or PreCompact; installed all the same,
# so a release that does fire them is captured.
CLINE_EVENTS = ("TaskStart", "TaskResume", "UserPromptSubmit", "PostToolUse", "TaskComplete", "TaskError",
                "TaskCancel", "SessionShutdown")
OWN_FILE = "ai-memory"
PLUGIN_SOURCE = resources.files("ai_memory.hooks") / "opencode-plugin.js"
_PLUGIN_COMMAND = "__AI_MEMORY_HOOK_COMMAND__"

_CURSOR_FILE = {"user": ".cursor/hooks.json", "project": ".cursor/hooks.json"}
_FOLDERS = {  # agent → (folder under $HOME, folder under the project dir)
    "copilot": (".copilot/hooks", ".github/hooks"),
    "cline": ("Documents/Cline/Hooks", ".clinerules/hooks"),
    "opencode": (".config/opencode/plugins", ".opencode/plugins"),
}
FILE_AGENTS = ("cursor", *_FOLDERS)
CLINE_MARK = "# ai-memory: the "  # second line of a Cline hook script of ours
PLUGIN_MARK = "// ai-memory for OpenCode"  # first line of the plugin
_PLUGIN_COMMAND_LINE = re.compile(r"^const HOOK_CMD = (\"(?:[^\"\\]|\\.)*\")", re.M)


# ---- Cursor: a shared hooks.json ------------------------------------------------------------

def cursor_path(target: Target) -> Path:
    base = target.home if target.scope == "user" else target.project_dir
    return base / _CURSOR_FILE[target.scope]


def _cursor_doc(doc: dict[str, Any], target: Target, install: bool) -> dict[str, Any]:
    """``doc`` with exactly our handlers (none when uninstalling): each replaced where it was or
    appended; an event or ``hooks`` that only our removal left empty is dropped."""
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f'"hooks" in {cursor_path(target)} is not a JSON object')
    merged: dict[str, Any] = {}
    for event, handlers in hooks.items():
        if not isinstance(handlers, list):
            merged[event] = handlers
            continue
        kept = [h for h in handlers if not is_ours(h, target.url)]
        if install and event in CURSOR_EVENTS:
            at = next((i for i, h in enumerate(handlers) if is_ours(h, target.url)), len(kept))
            kept.insert(min(at, len(kept)), _cursor_handler(target, event))
        if kept or not handlers:
            merged[event] = kept
    for event in CURSOR_EVENTS if install else ():
        merged.setdefault(event, [_cursor_handler(target, event)])
    out = {"version": 1, **doc} if install and "version" not in doc else dict(doc)
    if merged or (not hooks and "hooks" in doc):
        out["hooks"] = merged
    else:
        out.pop("hooks", None)
    if not install and "hooks" in doc and set(out) == {"version"}:
        return {}  # nothing but the format's version left: a file install made is removed again
    return out


def _cursor_handler(target: Target, event: str) -> dict[str, Any]:
    return {"command": hook_command(target, event), "timeout": timeout_s(target.agent, event)}


def _cursor_change(target: Target, install: bool) -> FileChange:
    path = cursor_path(target)
    before, doc = read_settings(path)
    if before is None and not install:
        return FileChange(path, None, None)
    return json_change(path, before, doc, _cursor_doc(doc, target, install))


# ---- files of our own -----------------------------------------------------------------------

def own_folder(target: Target) -> Path:
    user, project = _FOLDERS[target.agent]
    return target.home / user if target.scope == "user" else target.project_dir / project


@dataclass(frozen=True)
class OwnFile:
    name: str
    text: str
    executable: bool = False


def own_files(target: Target) -> list[OwnFile]:
    """The files of ours the agent's hooks are, by name in its folder."""
    if target.agent == "copilot":
        hooks = {event: [{"type": "command", "bash": hook_command(target, event),
                          "timeoutSec": timeout_s(target.agent, event)}] for event in COPILOT_EVENTS}
        return [OwnFile(f"{OWN_FILE}.json", json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n")]
    if target.agent == "cline":
        return [OwnFile(event, f"#!/bin/sh\n{CLINE_MARK}{event} hook (ai-memory uninstall-hooks --agent cline "
                               f"removes it)\n{hook_command(target, event)}\n", executable=True)
                for event in CLINE_EVENTS]
    return [OwnFile(f"{OWN_FILE}.js", _plugin(target))]


def _plugin(target: Target) -> str:
    try:
        template = PLUGIN_SOURCE.read_text(encoding="utf-8")
    except OSError as exc:
        raise StorageError(f"cannot read the OpenCode plugin {PLUGIN_SOURCE}", detail=str(exc)) from exc
    # The command with "{event}" left for the plugin to fill in, as a JSON (and so JS) string.
    return template.replace(_PLUGIN_COMMAND, json.dumps(hook_command(target, "{event}")))


def _is_our_file(text: str, agent: str) -> bool:
    """A file an ai-memory install wrote (any install's: another data dir, an older version): by
    its whole form, never by a mention of ai-memory in someone else's script."""
    if agent == "cline":
        lines = text.splitlines()
        return len(lines) == 3 and lines[0] == "#!/bin/sh" and lines[1].startswith(CLINE_MARK) and _runs_ours(lines[2])
    if agent == "opencode":
        return text.startswith(PLUGIN_MARK)
    try:
        hooks = json.loads(text).get("hooks")
    except (ValueError, RecursionError, AttributeError):
        return False
    handlers = [h for hs in hooks.values() if isinstance(hs, list) for h in hs] if isinstance(hooks, dict) else []
    return bool(handlers) and all(isinstance(h, dict) and _runs_ours(str(h.get("bash", ""))) for h in handlers)


def _runs_ours(command: str) -> bool:
    return HOOK_CLIENT in command or runs_our_cli(command)


def _own_file_change(path: Path, wanted: OwnFile | None, target: Target) -> FileChange:
    try:
        before: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}", detail=str(exc)) from exc
    if before is not None and not _is_our_file(before, target.agent):
        if wanted is None:
            return FileChange(path, before, None)
        raise ConfigError(f"{path} exists and is not ai-memory's", detail="rename it, or merge it by hand")
    if wanted is None:
        return FileChange(path, before, "" if before is not None else None)
    return FileChange(path, before, wanted.text, executable=wanted.executable)


# ---- plans ----------------------------------------------------------------------------------

def plan_install(target: Target) -> list[FileChange]:
    if target.agent == "cursor":
        return [_cursor_change(target, install=True)]
    folder = own_folder(target)
    return [_own_file_change(folder / f.name, f, target) for f in own_files(target)]


def plan_uninstall(target: Target) -> list[FileChange]:
    if target.agent == "cursor":
        return [_cursor_change(target, install=False)]
    folder = own_folder(target)
    return [_own_file_change(folder / f.name, None, target) for f in own_files(target)]


def where(target: Target) -> Path:
    """The file or folder the agent's hooks are in."""
    return cursor_path(target) if target.agent == "cursor" else own_folder(target)


def our_commands(target: Target) -> list[str]:
    """The hook commands of ours installed for ``target``, as written (what doctor checks)."""
    if target.agent == "cursor":
        try:
            _, doc = read_settings(cursor_path(target))
        except ConfigError:
            return []
        hooks = doc.get("hooks")
        handlers = [h for hs in hooks.values() if isinstance(hs, list) for h in hs] if isinstance(hooks, dict) else []
        return [str(h["command"]) for h in handlers if is_ours(h, target.url)]
    commands = []
    for own in own_files(target):
        try:
            text = (own_folder(target) / own.name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if _is_our_file(text, target.agent):
            commands += _commands_in(text, target.agent)
    return commands


def _commands_in(text: str, agent: str) -> list[str]:
    """The commands a file of ours runs: a Cline script's last line, the ``bash`` of each Copilot
    handler, the OpenCode plugin's ``HOOK_CMD``."""
    if agent == "cline":
        return [text.splitlines()[2]]
    if agent == "opencode":
        found = _PLUGIN_COMMAND_LINE.search(text)
        return [str(json.loads(found.group(1)))] if found else []
    hooks = json.loads(text)["hooks"]
    return [str(h["bash"]) for hs in hooks.values() for h in hs]
