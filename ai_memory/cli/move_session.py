"""``ai-memory move-session SESSION_ID --to PROJECT``: a session recorded under the wrong project
moves, with its observations, its session page and its handoff."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import print_json
from ai_memory.cli.lifecycle import change, render

HELP = "move a session recorded under the wrong project (its events, its page, its handoff)"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("move-session", parents=[common], help=HELP, description=HELP,
                       epilog="example: ai-memory move-session 5f0c2a9e-7d3b --to acme-api")
    p.add_argument("session_id", metavar="SESSION_ID", help="the session's id (ai-memory recent shows them)")
    p.add_argument("--to", required=True, metavar="PROJECT", help="the project it belongs to")
    p.add_argument("--dry-run", action="store_true", help="show what would move, change nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    report = change(args, "move-session", {"session_id": args.session_id, "project": args.to, "dry_run": args.dry_run})
    if args.json:
        print_json(report)
    else:
        print(render(report))
    return 0
