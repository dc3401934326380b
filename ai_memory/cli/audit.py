"""``ai-memory audit``: who wrote, corrected or deleted what and when, newest first (admin only)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from ai_memory.cli.common import print_json
from ai_memory.cli.team_access import daemon_api, offline

HELP = "show the audit log: who wrote, corrected or deleted what and when"
EXAMPLE = "example: ai-memory audit -n 20 --user alice"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("audit", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("-n", "--limit", type=int, default=50, help="entries to show (default 50)")
    p.add_argument("--user", help="only this user's actions")
    p.add_argument("--json", action="store_true", help="print the entries as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= 10_000:
        args.usage("--limit must be from 1 to 10000")
    api = daemon_api(args)
    entries: Sequence[Mapping[str, Any]]  # the daemon's answer, or the same rows from the data dir
    if api is not None:
        entries = api.audit(args.limit, args.user)
    else:
        from ai_memory.coordination.audit_log import entries as audit_entries

        entries = offline(args, lambda _u, reader: audit_entries(reader, args.limit, args.user))
    if args.json:
        print_json(entries)
    else:
        print("\n".join(render(entries)) if entries else "the audit log is empty")
    return 0


def render(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    return [f"{e['at'][:19]}  {e['user']:<16} {e['action']:<16} {e['target']}" + (f"  ({e['detail']})" if e["detail"] else "")
            for e in entries]
