"""Where the shell hook client lives: the script shipped with ai-memory, and its installed copy.

Kept apart from the settings-file code, and free of pathlib, so that ``ai-memory hook`` can find
the script and hand the event to it with nothing imported but ``os``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: nothing on the hook's fast path imports typing
if TYPE_CHECKING:
    from pathlib import Path

HOOK_CLIENT = "ai-memory-hook"
SHELL = "/bin/sh"


def hook_source() -> str:
    """The shell client shipped with this installation: package data of ``ai_memory.hooks`` (the
    top-level ``hooks/``, linked into the package as ``ai_memory/hooks``), found where the package's
    own file is, as ``importlib.resources.files`` would find it for a package on disk, without
    importing importlib.resources (~20 ms, most of the hook's budget)."""
    import ai_memory.hooks as package

    return os.path.join(os.path.dirname(os.path.realpath(package.__file__ or "")), HOOK_CLIENT)


def hook_client_path(data_dir: Path) -> Path:
    """The copy ``install-hooks`` puts in the data dir, which agents' settings run."""
    return data_dir / "bin" / HOOK_CLIENT


def shell_argv(agent: str, event: str | None, data_dir: str | None, url: str | None, cli: str | None = None,
               script: str | None = None) -> list[str] | None:
    """The argv that runs the shell client for one event; None where it cannot run here.
    ``cli``: the ``ai-memory`` command that drains the spool to a remote daemon."""
    script = script or hook_source()
    if not (os.path.exists(SHELL) and os.path.isfile(script)):
        return None
    argv = [SHELL, script]
    for flag, value in (("--data-dir", data_dir), ("--url", url), ("--cli", cli)):
        if value:
            argv += [flag, value]
    return argv + [agent] + ([event] if event else [])
