"""``ai-memory recent``: the newest pages and sessions of a project, or of all of them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import add_project_flags, api_from, listing_project

if TYPE_CHECKING:
    from ai_memory.core.wire import Recent

HELP = "list the newest memory pages and sessions (the current project plus _global by default)"
EXAMPLE = "example: ai-memory recent --project acme-api -n 5"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("recent", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    add_project_flags(p, "recent pages and sessions")
    p.add_argument("-n", "--limit", type=int, default=10, help="how many of each (1-100, default 10)")
    p.add_argument("--json", action="store_true", help="print {pages, sessions} as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= 100:
        args.usage("--limit must be from 1 to 100")
    found = api_from(args).recent(project=listing_project(args), limit=args.limit)
    if args.json:
        print_json(found)
        return 0
    print("\n".join(render(found)))
    return 0


def render(found: "Recent") -> list[str]:
    lines = ["pages:"] if found["pages"] else ["no pages yet"]
    for page in found["pages"]:
        when = (page.get("updated") or "")[:16].replace("T", " ")
        lines.append(f"  {when:16}  {page['type']:<15}  {page['title']}")
        lines.append(f"  {'':16}  {page['path']}")
    lines.append("sessions:" if found["sessions"] else "no sessions yet")
    for s in found["sessions"]:
        when = (s.get("last_event_at") or "")[:16].replace("T", " ")
        state = "ended" if s.get("ended_at") else "open"
        lines.append(f"  {when:16}  {s.get('agent') or '?':<8} {s.get('project') or '?'}  "
                     f"{s['events']} events, {state}  {s['id']}")
        if s.get("page_path"):
            lines.append(f"  {'':16}  {s['page_path']}")
    return lines
