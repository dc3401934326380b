"""``ai-memory install-mcp`` / ``uninstall-mcp``: register ``ai-memory mcp`` with an agent.

The file editing lives in ``ai_memory.client.mcp_settings``; this verb works out the command
to run and the environment to pin (at user scope; a project's file names ``ai-memory`` alone),
then prints a diff (``--dry-run``) or writes the files and says what it did, one line per file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ai_memory.cli.common import config_from
from ai_memory.cli.file_changes import apply_and_report, portable_note, print_diffs
from ai_memory.client.agent_settings import AGENTS

if TYPE_CHECKING:
    from ai_memory.client.mcp_settings import HttpSpec
    from ai_memory.config import Config

PROJECT_HEADER = "X-AI-Memory-Project"  # what ai_memory.mcp.http reads (case does not matter)

INSTALL_HELP = "register ai-memory's MCP server (ai-memory mcp) with an agent"
UNINSTALL_HELP = "remove ai-memory's MCP server from an agent's settings, keeping everything else"
EXAMPLE = "example: ai-memory {verb} --agent claude --scope project --dry-run"
SCOPES = ("user", "project")
TRANSPORTS = ("stdio", "http")
RESTART_NOTE = "restart the agent (or reload its MCP servers) to pick this up"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    for verb, help_text in (("install-mcp", INSTALL_HELP), ("uninstall-mcp", UNINSTALL_HELP)):
        p = sub.add_parser(verb, parents=[common], help=help_text, description=help_text,
                           epilog=EXAMPLE.format(verb=verb))
        p.add_argument("--agent", required=True, choices=AGENTS, help="which agent's settings")
        p.add_argument("--scope", choices=SCOPES, default="user",
                       help="user: files under your home; project: files in the project")
        p.add_argument("--project-dir",
                       help="project for --scope project (default: the git root of the current directory, else it)")
        p.add_argument("--dry-run", action="store_true", help="print a diff and write nothing")
        if verb == "install-mcp":
            p.add_argument("--transport", choices=TRANSPORTS, default="stdio", help=(
                "stdio: the agent starts ai-memory mcp; http: it connects to the daemon's /mcp itself "
                "(--url; the token goes in a header of the settings file, written 0600)"))
        p.set_defaults(run=run, mcp_verb=verb, usage=p.error)


def run(args: argparse.Namespace) -> int:
    import sys

    from ai_memory.client import mcp_settings
    from ai_memory.client.rules_file import project_root

    project = Path(args.project_dir).expanduser().resolve() if args.project_dir else project_root(Path.cwd())
    target = mcp_settings.McpTarget(args.agent, args.scope, Path.home(), project)
    config = config_from(args)
    http = http_spec(config, project, args.scope) if args.mcp_verb == "install-mcp" and args.transport == "http" else None
    if http is not None:
        changes = mcp_settings.plan_install(target, http)
    elif args.mcp_verb == "install-mcp" and args.scope == "project":
        changes = mcp_settings.plan_install(target, mcp_settings.PORTABLE_SERVER)
    elif args.mcp_verb == "install-mcp":
        command, server_args = mcp_settings.server_command(Path(sys.executable))
        changes = mcp_settings.plan_install(target, mcp_settings.ServerSpec(command, server_args, pinned_env(config)))
    else:
        changes = mcp_settings.plan_uninstall(target)
    if args.dry_run:
        print_diffs(changes)
        return 0
    apply_and_report(changes, config.data_dir)
    if any(change.changed for change in changes):
        print(f"note: {RESTART_NOTE}")
        if http is None and args.scope == "project":
            print(f"note: {portable_note(config.data_dir, '`ai-memory mcp`')}")
    if http is not None:
        remember_http_use(config.data_dir)
        check_server(http)
    return 0


def check_server(spec: "HttpSpec") -> None:
    """Ask the server for its tools as the agent will, and say what it answered."""
    import sys

    from ai_memory.client.mcp_probe import offered_tools
    from ai_memory.core.errors import AiMemoryError, DaemonUnavailable

    try:
        tools = offered_tools(spec.url, dict(spec.headers))
    except DaemonUnavailable as exc:
        print(f"note: {spec.url} does not answer yet ({exc.message}); the agent connects once the daemon runs")
    except AiMemoryError as exc:
        print(f"warning: {exc.message}" + (f" ({exc.detail})" if exc.detail else ""), file=sys.stderr)
    else:
        print(f"checked: {spec.url} offers {len(tools)} tools")


def remember_http_use(data_dir: Path) -> None:
    """Tell this data dir's daemon to load the HTTP tools at its next start, not at the first call
    (which an agent would otherwise meet seconds slower than it waits)."""
    from ai_memory.datadir import MCP_HTTP_USED

    if data_dir.is_dir():
        try:
            (data_dir / MCP_HTTP_USED).touch(mode=0o600)
        except OSError:
            pass  # only the warm start is lost: the tools still load at their first call


def http_spec(config: "Config", project_dir: Path, scope: str) -> "HttpSpec":
    """The daemon's /mcp and the headers it needs: the token of this data dir (your user token
    on a team server), and for one project its name (the tools' default project; user scope
    leaves it out, so the default is _global and a tool call names its project)."""
    from ai_memory.client.mcp_settings import HttpSpec
    from ai_memory.client.project import resolve_project
    from ai_memory.core.errors import ConfigError

    try:
        token = config.token_path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"no token at {config.token_path}", detail="the HTTP transport sends it as a header") from exc
    headers = {"Authorization": f"Bearer {token}"}
    if scope == "project":
        headers[PROJECT_HEADER] = resolve_project(project_dir).name
    return HttpSpec(config.url.rstrip("/") + "/mcp", headers)


def pinned_env(config: "Config") -> dict[str, str]:
    """AI_MEMORY_DATA_DIR / AI_MEMORY_URL, for what the server would not find on its own.

    The agent starts the server with its own environment, which need not have ours: pin the
    data dir unless it is the default one, and the URL unless that data dir's config gives it.
    """
    from ai_memory.config import default_data_dir, load_config

    env = {}
    if config.data_dir != default_data_dir({}):
        env["AI_MEMORY_DATA_DIR"] = str(config.data_dir)
    if config.url != load_config(config.data_dir, environ={}).url:
        env["AI_MEMORY_URL"] = config.url
    return env
