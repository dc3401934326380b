"""``ai-memory write TEXT --kind KIND``: store a structured memory (a fact, a decision, ...)."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from, cwd_project, text_arg

HELP = "store a structured memory: a fact, decision, preference, gotcha, procedure, rule, ..."
EXAMPLE = ('example: ai-memory write "Access tokens live 15 minutes; refresh tokens 30 days." '
           "--kind decision --tag auth --entity TOKEN_TTL")
# Mirrors core.page.MEMORY_KINDS (not imported here: it pulls in yaml); a test keeps them equal.
KINDS = ("fact", "decision", "preference", "episode", "gotcha", "procedure", "rule", "concept", "note")
SCOPES = ("project", "_global", "private")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("write", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("text", help="what to remember, one fact per memory; - reads it from stdin")
    add_memory_flags(p, kind_required=True)
    p.add_argument("--scope", choices=SCOPES, help="project (default), _global (every project) or private")
    p.add_argument("--tag", action="append", help="a tag (repeat for more)")
    p.add_argument("--entity", action="append", help="a name this memory is about (repeat for more)")
    p.add_argument("--source", help="where this comes from (a URL, a ticket, a file)")
    p.add_argument("--expires-at", help="when it stops holding (ISO date or time)")
    p.add_argument("--idempotency-key", help="a repeat with the same key returns the first write")
    p.add_argument("--json", action="store_true", help="print {id, path, created} as JSON")
    p.set_defaults(run=run, usage=p.error)


def add_memory_flags(p: argparse.ArgumentParser, kind_required: bool) -> None:
    """--kind, --project and --title: shared with ``correct``."""
    p.add_argument("--kind", required=kind_required, choices=KINDS, help="what sort of memory")
    p.add_argument("--project", help="the project it belongs to (default: the current directory's)")
    p.add_argument("--title", help="a short title (default: the first sentence)")


def run(args: argparse.Namespace) -> int:
    text = text_arg(args, args.text, "the memory's text")
    stored = api_from(args).write(
        text=text, kind=args.kind, project=args.project or cwd_project(), scope=args.scope,
        title=args.title, tags=args.tag, entities=args.entity, source=args.source,
        expires_at=args.expires_at, idempotency_key=args.idempotency_key,
    )
    if args.json:
        print_json(stored)
    elif stored.get("pending"):
        print(f"pending {stored['id']}: {stored.get('note')}")
    elif stored.get("created", True):
        print(f"stored {stored['id']}: {stored['path']}")
    else:
        print(f"already stored with this idempotency key: {stored['id']}: {stored['path']}")
    return 0
