"""``ai-memory forget-sweep [--dry-run]``: remove cold episodic and expired pages now."""

from __future__ import annotations

import argparse
from typing import Any

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

HELP = "remove cold episodic pages and expired pages (git history keeps them); --dry-run only lists them"
EXAMPLE = ("example: ai-memory forget-sweep --dry-run\n"
           "         ai-memory forget-sweep --tombstones   # what was removed, and how to restore it")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("forget-sweep", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--dry-run", action="store_true", help="list what a sweep would remove, and why; change nothing")
    what.add_argument("--tombstones", action="store_true", help="list the pages earlier sweeps removed")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    api = api_from(args)
    if args.tombstones:
        found = api.tombstones()
        if args.json:
            print_json({"tombstones": found})
        else:
            for t in found:
                print(_tombstone_line(t))
        return 0
    report = api.forget_sweep(dry_run=args.dry_run)
    if args.json:
        print_json(report)
        return 0
    for item in report["removed"]:
        print(_removal_line(item))
    verb = "would remove" if report["dry_run"] else "removed"
    tail = f"; {len(report['purged_tombstones'])} old tombstones purged" if report["purged_tombstones"] else ""
    commit = f" in commit {sha[:12]}" if (sha := report.get("git_commit")) else ""
    print(f"{verb} {len(report['removed'])} pages{commit}{tail}")
    return 0


def _removal_line(item: dict[str, Any]) -> str:
    score = "" if item["retention"] is None else f" retention {item['retention']:.3f}"
    return f"{item['reason']:<8} {item['tier']:<10}{score:<17} {item['path']}"


def _tombstone_line(t: dict[str, Any]) -> str:
    restore = f"git show {t['git_commit'][:12]}^:{t['path']}" if t.get("git_commit") else f"git log -- {t['path']}"
    return f"{t['removed_at'][:10]} {t['reason']:<8} {t['path']}   (restore: {restore})"
