"""``ai-memory correct ID TEXT``: supersede a memory with a corrected one, keeping the history."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from, text_arg
from ai_memory.cli.write import add_memory_flags

if TYPE_CHECKING:
    from ai_memory.core.wire import PageAnswer

HELP = "correct a stored memory: a new record supersedes it, the old one stays in its lineage"
EXAMPLE = ('example: ai-memory correct 01J9Z6Q4K8M2N3P5R7S9T1V3W5 "Access tokens live 10 minutes." '
           '--reason "shortened after the audit"')


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("correct", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("page", metavar="ID", help="the memory to correct: its id or wiki path")
    p.add_argument("text", help="the corrected text; - reads it from stdin")
    p.add_argument("--reason", help="why the old memory was wrong or outdated")
    add_memory_flags(p, kind_required=False)
    p.add_argument("--json", action="store_true", help="print {id, path, supersedes} as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    text = text_arg(args, args.text, "the corrected text")
    api = api_from(args)
    old = api.read_page(args.page)
    kind, project, scope = _defaults(old)
    if not (args.kind or kind):
        args.usage(f"{old['path']} has no kind in its frontmatter; pass --kind")
    stored = api.write(
        text=text, kind=args.kind or kind, project=args.project or project, scope=scope,
        title=args.title, supersedes=old.get("uid") or old["path"], supersede_reason=args.reason,
    )
    if args.json:
        print_json(stored)
    elif stored.get("pending"):
        print(f"pending {stored['id']}: {stored.get('note')}")
        print(f"supersedes {old.get('uid') or old['path']}")
    else:
        print(f"stored {stored['id']}: {stored['path']}")
        print(f"supersedes {old.get('uid') or old['path']}: {old['path']}")
    return 0


def _defaults(old: "PageAnswer") -> tuple[str | None, str, str]:
    """The old page's kind, project and scope (a _global memory remembers its origin project)."""
    fm = old.get("frontmatter") or {}
    scope = old.get("scope") or fm.get("scope") or "project"
    project = fm.get("origin_project") or old["project"]
    return fm.get("kind"), project, scope
