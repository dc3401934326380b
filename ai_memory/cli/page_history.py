"""``ai-memory history PAGE``, ``show PAGE --at REV`` and ``restore-page PAGE --at REV``: a page's
versions from the wiki's git history, one of them read, or written back as a new commit."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

if TYPE_CHECKING:
    from ai_memory.core.wire import PageHistory, Restored

PAGE_HELP = "a wiki path (<project>/<family>/<page>.md) or a memory id"
REV_HELP = "a commit id (or its first digits) from ai-memory history, HEAD or HEAD~N"
VERBS = {
    "history": ("list a page's versions from the wiki's git history (commit, time, author, message)",
                "example: ai-memory history acme-api/decisions/token-ttl-is-15-minutes-3f9c2a1b.md"),
    "show": ("show a page as it is, or as a past version (--at REV)",
             "example: ai-memory show acme-api/decisions/token-ttl-is-15-minutes-3f9c2a1b.md --at 3f9c2a1b07"),
    "restore-page": ("write a past version of a page back as a new commit (history is never rewritten)",
                     "example: ai-memory restore-page acme-api/gotchas/pool-limit-9a0b1c2d.md --at HEAD~1"),
}


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    for verb, (help_text, example) in VERBS.items():
        p = sub.add_parser(verb, parents=[common], help=help_text, description=help_text, epilog=example)
        p.add_argument("page", help=PAGE_HELP)
        if verb != "history":
            p.add_argument("--at", required=verb == "restore-page", metavar="REV", help=REV_HELP)
        p.add_argument("--json", action="store_true", help="print the answer as JSON")
        p.set_defaults(run=run, history_verb=verb, usage=p.error)


def run(args: argparse.Namespace) -> int:
    api = api_from(args)
    found: Mapping[str, Any]  # the history, the page or the restore: printed as JSON as it came
    if args.history_verb == "history":
        found = history = api.page_history(args.page)
        lines = render_history(history)
    elif args.history_verb == "show":
        from ai_memory.cli.read import render

        found = page = api.read_page(args.page, at=args.at)
        lines = ([f"version {page['revision']['short']} of {page['revision']['time'][:19]}"] if args.at else [])
        lines += render(page)
    else:
        found = restored = api.restore_page(args.page, args.at)
        lines = [render_restore(restored)]
    if args.json:
        print_json(found)
    else:
        print("\n".join(lines))
    return 0


def render_history(found: "PageHistory") -> list[str]:
    lines = [f"{found['path']}: {len(found['revisions'])} versions, newest first"]
    for rev in found["revisions"]:
        mark = "  (removed)" if rev["removed"] else ""
        lines.append(f"  {rev['short']}  {rev['time'][:19]}  {rev['author']}  {rev['message']}{mark}")
    return lines


def render_restore(found: "Restored") -> str:
    source = found["restored_from"]
    if not found["changed"]:
        return f"{found['path']} already is version {source['short']}: nothing written"
    commit = (found["commit"] or "?")[:10]
    return f"restored {found['path']} to version {source['short']} of {source['time'][:19]} (commit {commit})"
