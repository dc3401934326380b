"""``ai-memory project list|rename|merge|purge``: the projects memory knows, and their lifecycle.

The lifecycle verbs act through the daemon when one serves the data dir (it is the only writer
while it runs, and it must start resolving the old name at once), else on the data dir itself
(``lifecycle``), holding the serve lock.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from
from ai_memory.cli.lifecycle import change, render

HELP = "the projects memory knows, and their lifecycle (list, which, rename, merge, purge)"
WHICH_HELP = ("the project a directory belongs to, and the rule that named it (a marker file, the git remote,"
              " the repository, the directory's name)")
LIST_HELP = "every project with its pages, sessions and last activity, most recent first"
RENAME_HELP = ("give a project a new name: its wiki folder moves in one git commit, every index row and "
               "handoff follows, and the old name keeps resolving to the new one")
MERGE_HELP = ("move the pages of SRC into DST (a name already taken there is renamed, never overwritten); "
              "SRC becomes an old name of DST")
PURGE_HELP = "remove every page of a project (tombstones; git history keeps them, the journal its records)"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("project", help=HELP, description=HELP, epilog="example: ai-memory project list --json")
    verbs = p.add_subparsers(dest="project_verb", metavar="SUBCOMMAND", required=True)
    listing = verbs.add_parser("list", parents=[common], help=LIST_HELP, description=LIST_HELP,
                               epilog="example: ai-memory project list --json")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    listing.set_defaults(run=run_list, usage=listing.error)
    which = verbs.add_parser("which", parents=[common], help=WHICH_HELP, description=WHICH_HELP,
                             epilog="example: ai-memory project which ~/src/api --name-only")
    which.add_argument("dir", metavar="DIR", nargs="?", default=".", help="a directory (default: the current one)")
    which.add_argument("--name-only", action="store_true", help="print the project's name alone")
    which.set_defaults(run=run_which, usage=which.error)
    for name, helptext, args, example in (
            ("rename", RENAME_HELP, ("OLD", "NEW"), "ai-memory project rename acme acme-api --dry-run"),
            ("merge", MERGE_HELP, ("SRC", "DST"), "ai-memory project merge acme-web acme --json"),
            ("purge", PURGE_HELP, ("NAME",), "ai-memory project purge scratch --confirm")):
        verb = verbs.add_parser(name, parents=[common], help=helptext, description=helptext,
                                epilog=f"example: {example}")
        for arg in args:
            verb.add_argument(arg.lower(), metavar=arg)
        verb.add_argument("--dry-run", action="store_true", help="show what would move (or go), change nothing")
        verb.add_argument("--json", action="store_true", help="print the report as JSON")
        if name == "purge":
            verb.add_argument("--confirm", action="store_true", help="required: the pages become tombstones")
        verb.set_defaults(run=run_change, usage=verb.error)


def run_list(args: argparse.Namespace) -> int:
    listing = api_from(args).project_listing()
    found, aliases = listing["projects"], listing.get("aliases") or {}
    if args.json:
        print_json({"projects": found, "aliases": aliases})
        return 0
    width = max((len(p["project"]) for p in found), default=7)
    print(f"{'project':<{width}}  pages  sessions  last activity")
    for p in found:
        print(f"{p['project']:<{width}}  {p['pages']:>5}  {p['sessions']:>8}  {(p['last_activity'] or '-')[:19]}")
    if aliases:
        print("old names: " + ", ".join(f"{old} → {new}" for old, new in sorted(aliases.items())))
    return 0


def run_which(args: argparse.Namespace) -> int:
    """Resolved on this machine, from files alone (what the hook clients do): no daemon is asked."""
    from ai_memory.client.project import resolve_project

    found = resolve_project(args.dir)
    print(found.name if args.name_only else f"{found.name} ({found.source}: {found.root})")
    return 0


def run_change(args: argparse.Namespace) -> int:
    verb: str = args.project_verb
    if verb == "purge" and not (args.confirm or args.dry_run):
        print(f"ai-memory: purging {args.name} removes every page of it: add --confirm (or --dry-run to see them)",
              file=sys.stderr)
        return 2
    body: dict[str, Any] = {"dry_run": args.dry_run}
    if verb == "purge":
        body.update(project=args.name, confirm=args.confirm)
    else:
        body.update({"from": getattr(args, "old", None) or args.src, "to": getattr(args, "new", None) or args.dst})
    report = change(args, verb, body)
    if args.json:
        print_json(report)
    else:
        print(render(report))
    return 0
