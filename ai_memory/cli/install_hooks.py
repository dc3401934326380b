"""``ai-memory install-hooks`` / ``uninstall-hooks``: wire an agent's hooks to the daemon.

The merging lives in ``ai_memory.client.agent_settings``; this verb resolves the config, the
token and the target files, prints a diff (``--dry-run``) or writes the files and says what it
did, one line per file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ai_memory import datadir
from ai_memory.cli.common import config_from
from ai_memory.cli.file_changes import apply_and_report
from ai_memory.client import agent_settings as settings
from ai_memory.config import Config
from ai_memory.core.errors import ConfigError

INSTALL_HELP = "add ai-memory's hooks to Claude Code, Codex or Gemini CLI settings"
UNINSTALL_HELP = "remove ai-memory's hooks from an agent's settings, keeping everything else"
EXAMPLE = "example: ai-memory {verb} --agent claude --scope project --dry-run"
CODEX_TRUST_NOTE = ("note: Codex skips new or changed hooks until you trust them: "
                    "open /hooks in Codex and trust the ai-memory hooks")
DRY_RUN_TOKEN = "<created on install>"


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
    if args.hooks_verb == "install-hooks":
        return _install(target, config, args.dry_run)
    return _uninstall(target, config, args.dry_run)


def _install(target: settings.Target, config: Config, dry_run: bool) -> int:
    token = _token(config, dry_run) if target.agent == "claude" else None
    changes = settings.plan_install(target, token)
    if dry_run:
        _print_diffs(changes)
        return 0
    client = settings.install_hook_client(config.data_dir)
    if client is None:
        print(f"warning: {settings.HOOK_SOURCE} not found; {target.hook_command} is not installed",
              file=sys.stderr)
    _report(changes, config)
    if target.agent == "codex" and any(change.changed for change in changes):
        print(CODEX_TRUST_NOTE)
    return 0


def _uninstall(target: settings.Target, config: Config, dry_run: bool) -> int:
    changes = settings.plan_uninstall(target)
    if dry_run:
        _print_diffs(changes)
        return 0
    _report(changes, config)
    return 0


def _token(config: Config, dry_run: bool) -> str:
    """The daemon's API token; created (as the daemon would) unless this is a dry run."""
    path = config.token_path
    try:
        if dry_run:
            return datadir.read_token(path) if path.exists() else DRY_RUN_TOKEN
        config.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        return datadir.ensure_token(path)
    except OSError as exc:
        raise ConfigError(f"cannot read or create the token at {path}", detail=str(exc)) from exc


def _print_diffs(changes: list[settings.FileChange]) -> None:
    for change in changes:
        if change.changed:
            diff = settings.unified_diff(change)
            sys.stdout.write(diff or f"changes {change.path}: the token's value only\n")
        else:
            print(f"{'absent' if change.before is None else 'unchanged'} {change.path}")
        for note in change.notes:
            print(f"note: {note}")


def _report(changes: list[settings.FileChange], config: Config) -> None:
    apply_and_report(changes, config.data_dir)
    for change in changes:
        if change.path.name == "settings.local.json" and change.before is None and change.changed:
            print(f"note: {change.path} holds the token; keep it out of version control")
