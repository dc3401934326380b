"""``ai-memory delete PAGE``: remove a page (a mistake, a leaked secret); git history keeps it."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

HELP = "delete a memory page by its wiki path or memory id (the wiki's git history still has it)"
EXAMPLE = "example: ai-memory delete acme-api/notes/scratch-3f9c2a1b.md"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("delete", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("page", help="a wiki path (<project>/<family>/<page>.md) or a memory id")
    p.add_argument("--json", action="store_true", help="print {deleted, id} as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    done = api_from(args).delete_page(args.page)
    if args.json:
        print_json(done)
    else:
        print(f"deleted {done['deleted']}")
    return 0
