"""``ai-memory read PAGE``: show one page, by wiki path or memory id, with its corrections."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

if TYPE_CHECKING:
    from ai_memory.core.wire import Correction, PageAnswer

HELP = "show one memory page by its wiki path or memory id, with its lineage of corrections"
EXAMPLE = "example: ai-memory read acme-api/decisions/token-ttl-is-15-minutes-3f9c2a1b.md"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("read", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("page", help="a wiki path (<project>/<family>/<page>.md) or a memory id")
    p.add_argument("--json", action="store_true", help="print the page, frontmatter and lineage as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    page = api_from(args).read_page(args.page)
    if args.json:
        print_json(page)
        return 0
    print("\n".join(render(page)))
    return 0


def render(page: "PageAnswer") -> list[str]:
    fm = page.get("frontmatter") or {}
    lines = [f"# {page['title']}", f"{page['type']} · {page['project']} · {page['path']}"]
    facts = [f"id {page['uid']}" if page.get("uid") else "", f"scope {page.get('scope') or 'project'}",
             f"created {page.get('created') or '?'}", f"updated {page.get('updated') or '?'}"]
    lines.append(" · ".join(f for f in facts if f))
    if fm.get("tags"):
        lines.append("tags: " + ", ".join(map(str, fm["tags"])))
    if page.get("expires_at"):
        lines.append(f"expires: {page['expires_at']}")
    if page.get("superseded_by"):
        reason = fm.get("supersede_reason")
        lines.append(f"superseded by {page['superseded_by']}" + (f": {reason}" if reason else ""))
    lines += [f"problem: {p}" for p in page.get("problems") or []]
    lines += ["", (page.get("body") or "").strip()]
    if page.get("lineage"):
        lines += ["", "lineage (oldest first):"]
        lines += _lineage(page["lineage"], page["path"])
    return lines


def _lineage(chain: "list[Correction]", here: str) -> list[str]:
    lines = []
    for link in chain:
        mark = "  <- this page" if link["path"] == here else ""
        lines.append(f"  {link['id']}  {(link.get('created') or '')[:10]}  {link['title']}{mark}")
        if link.get("supersedes") and link.get("reason"):
            lines.append(f"      correction: {link['reason']}")
    return lines
