"""``ai-memory restore FILE``: a backup archive into an empty data dir (or, with --force, in
place of one that is moved aside). Refuses a data dir a running daemon serves."""

from __future__ import annotations

import argparse
import sys
from typing import Any
from dataclasses import asdict
from pathlib import Path

from ai_memory.cli.common import config_from, print_json

HELP = "restore a backup archive into an empty data dir (--force: move the current one aside)"
EXAMPLE = ("example: ai-memory restore ~/.local/share/ai-memory/backups/ai-memory-20250101T120000.000Z.tar.gz\n"
           "         ai-memory restore memory.tar.gz --data-dir ~/ai-memory-copy")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("restore", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="an archive written by ai-memory backup")
    p.add_argument("--force", action="store_true", help="move a non-empty data dir aside to <dir>.before-restore-<time>")
    p.add_argument("--with-config", action="store_true",
                   help="take the archive's config.toml (keys that reach the network are shown and must be confirmed)")
    p.add_argument("--with-token", action="store_true",
                   help="take the archive's token as this data dir's admin token (an archive from --include-secrets)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def _confirm(reaching: list[tuple[str, Any]]) -> bool:
    """Show the archive's keys that reach the network and ask; never without a person to ask."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    print("The archive's config.toml would make ai-memory reach the network:", file=sys.stderr)
    for key, value in reaching:
        print(f"  {key} = {value!r}", file=sys.stderr)
    print("Use this config? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def run(args: argparse.Namespace) -> int:
    from ai_memory.backup import restore_archive

    target = config_from(args).data_dir
    report = restore_archive(Path(args.file).expanduser(), target, force=args.force,
                             show_progress=sys.stderr.isatty(), with_config=args.with_config,
                             with_token=args.with_token, confirm=_confirm)
    if args.json:
        print_json(asdict(report))
        return 0
    print(f"restored {report.files} files from the backup of {report.created_at} into {report.data_dir}")
    if report.moved_aside:
        print(f"the previous data dir is at {report.moved_aside}")
    if report.config != "archive" and (Path(report.data_dir) / "config.toml.from-backup").exists():
        print("the archive's config.toml is beside it as config.toml.from-backup, read by nothing"
              f" ({'this machine' if report.config == 'kept' else 'the default'}'s is in use)")
    if report.token == "new":
        print("a new API token was made: agents set up with the old one need `ai-memory install-hooks` again")
    return 0
