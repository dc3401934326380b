"""What every tool shares: the daemon's API, and where the agent is working."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.client.api import MemoryAPI
from ai_memory.client.project import resolve_project

# Claude Code sets this for the stdio MCP servers it launches; other hosts start the server in
# the project directory itself.
PROJECT_DIR_ENV = "CLAUDE_PROJECT_DIR"


def _session_id() -> str:
    # A host starts one server process per agent session, so one id per process lets
    # handoff_accept / message_pop record who claimed what without the agent knowing its id.
    return f"mcp-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class ToolContext:
    """The daemon client, the working directory and its project, and this server's session id."""

    api: MemoryAPI
    workdir: Path
    project: str
    session_id: str = field(default_factory=_session_id)

    @classmethod
    def for_dir(cls, api: MemoryAPI, workdir: Path) -> ToolContext:
        return cls(api=api, workdir=workdir, project=resolve_project(workdir).name)


def default_workdir(environ: Mapping[str, str], cwd: Path) -> Path:
    """The agent's project directory: ``$CLAUDE_PROJECT_DIR`` when set, else the server's cwd."""
    named = environ.get(PROJECT_DIR_ENV, "").strip()
    return Path(named).expanduser() if named else cwd
