"""``ai-memory install-hooks`` / ``uninstall-hooks``: wire an agent's hooks to the daemon.

The merging lives in ``ai_memory.client.agent_settings``; this verb resolves the config and
the target files, prints a diff (``--dry-run``) or writes the files (and, at user scope,
installs the hook client into the data dir) and says what it did, one line per file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ai_memory.cli.common import config_from
from ai_memory.cli.file_changes import apply_and_report, portable_note, print_diffs
from ai_memory.client import agent_settings as settings
from ai_memory.client import hook_files

INSTALL_HELP = "add ai-memory's hooks to an agent's settings (or hook files, or OpenCode plugin)"
UNINSTALL_HELP = "remove ai-memory's hooks from an agent's settings, keeping everything else"
EXAMPLE = "example: ai-memory {verb} --agent claude --scope project --dry-run"
CODEX_TRUST_NOTE = ("note: Codex skips new or changed hooks until you trust them: "
                    "open /hooks in Codex and trust the ai-memory hooks")
COPILOT_TRUST_NOTE = ("note: Copilot CLI runs a project's hooks only in a folder it trusts (it asks when a session "
                      "starts; `copilot -p` runs skip them until then)")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    for verb, help_text in (("install-hooks", INSTALL_HELP), ("uninstall-hooks", UNINSTALL_HELP)):
        p = sub.add_parser(verb, parents=[common], help=help_text, description=help_text,
                           epilog=EXAMPLE.format(verb=verb))
        p.add_argument("--agent", required=True, choices=settings.AGENTS, help="which agent's settings")
        p.add_argument("--scope", choices=settings.SCOPES, default="user",
                       help="user: files under your home; project: files under --project-dir")
        p.add_argument("--project-dir", help="project directory for --scope project (default: cwd)")
        p.add_argument("--dry-run", action="store_true", help="print a diff and write nothing")
        p.set_defaults(run=run, hooks_verb=verb)


def run(args: argparse.Namespace) -> int:
    config = config_from(args)
    target = settings.Target(
        agent=args.agent, scope=args.scope, home=Path.home(),
        project_dir=Path(args.project_dir or os.getcwd()).expanduser().resolve(),
        url=config.url, data_dir=config.data_dir,
    )
    installing = args.hooks_verb == "install-hooks"
    planner = hook_files if args.agent in hook_files.FILE_AGENTS else settings
    changes = planner.plan_install(target) if installing else planner.plan_uninstall(target)
    if args.dry_run:
        print_diffs(changes)
        return 0
    if installing and target.scope == "user" and settings.install_hook_client(config.data_dir) is None:
        print(f"warning: {settings.HOOK_SOURCE} not found; {target.hook_command} is not installed",
              file=sys.stderr)
    apply_and_report(changes, config.data_dir)
    if installing and any(change.changed for change in changes):
        if target.scope == "project":
            runs = "`ai-memory hook` (a no-op where it is missing)"
            print(f"note: {portable_note(config.data_dir, runs)}")
        if target.agent == "codex":
            print(CODEX_TRUST_NOTE)
        if target.agent == "copilot" and target.scope == "project":
            print(COPILOT_TRUST_NOTE)
    return 0
