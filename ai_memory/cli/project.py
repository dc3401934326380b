"""``ai-memory project list``: the projects memory knows, with their pages, sessions and last
activity."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

HELP = "the projects memory knows (list)"
LIST_HELP = "every project with its pages, sessions and last activity, most recent first"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("project", help=HELP, description=HELP, epilog="example: ai-memory project list --json")
    verbs = p.add_subparsers(dest="project_verb", metavar="SUBCOMMAND", required=True)
    listing = verbs.add_parser("list", parents=[common], help=LIST_HELP, description=LIST_HELP,
                               epilog="example: ai-memory project list --json")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    listing.set_defaults(run=run_list, usage=listing.error)


def run_list(args: argparse.Namespace) -> int:
    found = api_from(args).projects()
    if args.json:
        print_json({"projects": found})
        return 0
    width = max((len(p["project"]) for p in found), default=7)
    print(f"{'project':<{width}}  pages  sessions  last activity")
    for p in found:
        print(f"{p['project']:<{width}}  {p['pages']:>5}  {p['sessions']:>8}  {(p['last_activity'] or '-')[:19]}")
    return 0
