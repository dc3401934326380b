"""``ai-memory service install|uninstall|status [--json]``: start the daemon at login.

A systemd user unit on Linux, a launchd agent on macOS (see ``client/service.py``), running
this installation's ``ai-memory serve`` for the data dir. Idempotent: a second install changes
nothing; uninstall leaves nothing behind.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from ai_memory.cli.common import config_from, print_json

if TYPE_CHECKING:
    from ai_memory.client.service import ServiceTarget

HELP = "start the daemon at login: a systemd user unit (Linux) or a launchd agent (macOS)"
EXAMPLES = """examples:
  ai-memory service install
  ai-memory service status --json
  ai-memory service uninstall"""


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("service", parents=[common], help=HELP, description=HELP, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def target_for(data_dir: Path) -> "ServiceTarget":
    from ai_memory.client.mcp_settings import cli_launcher
    from ai_memory.client.service import ServiceTarget
    from ai_memory.config import user_config_home

    return ServiceTarget(sys.platform, Path.home(), user_config_home(), cli_launcher(Path(sys.executable)), data_dir)


def run(args: argparse.Namespace) -> int:
    from ai_memory.client import service

    target = target_for(config_from(args).data_dir)
    report = {"install": service.install, "uninstall": service.uninstall, "status": service.status}[args.action](target)
    if args.json:
        print_json(report.as_json())
        return 0
    if args.action == "status":
        state = "installed" if report.installed else "not installed"
        print(f"{report.manager}: {state} ({report.path}); enabled: {_word(report.enabled)}, "
              f"running: {_word(report.active)}" + (f", linger: {_word(report.linger)}" if report.linger is not None else ""))
    elif args.action == "install":
        print(f"{'wrote' if report.changed else 'unchanged'} {report.path}; enabled: {_word(report.enabled)}, "
              f"running: {_word(report.active)}")
    else:
        print(f"{'removed' if report.changed else 'absent'} {report.path}")
    for note in report.notes:
        print(f"note: {note}")
    return 0


def _word(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")
