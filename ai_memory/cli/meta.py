"""``ai-memory meta``: what memory holds, counted by scope and kind, with projects and agents."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import add_project_flags, api_from, listing_project

if TYPE_CHECKING:
    from ai_memory.core.wire import Meta

HELP = "count what memory holds: memories by scope and kind, projects, agents"
EXAMPLE = "example: ai-memory meta --all --json"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("meta", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    add_project_flags(p, "counts")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    found = api_from(args).meta(project=listing_project(args))
    if args.json:
        print_json(found)
        return 0
    print("\n".join(render(found)))
    return 0


def render(found: "Meta") -> list[str]:
    where = f"{found['project']} and _global" if found["project"] else "all projects"
    lines = [f"memories in {where}:"]
    counts = found["counts"]
    if not counts:
        lines.append("  none")
    for scope, kinds in sorted(counts.items()):
        detail = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        lines.append(f"  {scope:<8} {sum(kinds.values())}  ({detail})")
    lines.append(f"superseded: {found['superseded']}, expired: {found['expired']}")
    if found["projects"]:
        lines.append("projects:")
        lines += [f"  {p['project']:<24} {p['pages']} pages, {p['sessions']} sessions, "
                  f"last {(p['last_activity'] or '-')[:16]}" for p in found["projects"]]
    if found["agents"]:
        lines.append("agents:")
        lines += [f"  {a['agent'] or '?':<24} {a['sessions']} sessions, last {(a['last_seen'] or '-')[:16]}"
                  for a in found["agents"]]
    return lines
