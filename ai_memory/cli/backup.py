"""``ai-memory backup``: a verified archive of the data dir, taken while the daemon serves.

Runs in this process against the data dir: it only reads (the database through SQLite's online
backup API), never takes the serve lock and never waits for the daemon's writer.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from pathlib import Path

from ai_memory.cli.common import config_from, print_json

HELP = "write a verified .tar.gz of the database, wiki (with git history), journal and config"
EXAMPLE = ("example: ai-memory backup\n"
           "         ai-memory backup --to /mnt/usb/memory.tar.gz --include-secrets")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("backup", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--to", metavar="FILE.tar.gz", help="where to write it (default: <data_dir>/backups/ai-memory-<UTC time>.tar.gz)")
    p.add_argument("--include-secrets", action="store_true", help="also store the API token")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ai_memory.backup import create_backup

    config = config_from(args)
    report = create_backup(config, Path(args.to) if args.to else None,
                           include_secrets=args.include_secrets, show_progress=sys.stderr.isatty())
    if args.json:
        print_json(asdict(report))
    else:
        secrets = " (with the token)" if report.includes_secrets else ""
        print(f"wrote {report.path}: {report.size:,} bytes, {report.members} members{secrets}, "
              f"verified in {report.seconds:.1f} s")
    return 0
