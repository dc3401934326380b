"""``ai-memory finalize-session --session ID``: compile a session's page and handoff now."""

from __future__ import annotations

import argparse
import urllib.parse

from ai_memory.cli.common import client_from, config_from, print_json
from ai_memory.core.errors import DaemonUnavailable, NotFound

HELP = "compile a session into its wiki page and handoff now"
EXAMPLE = "example: ai-memory finalize-session --session 5f0c2a9e-7d3b-4e1a-9b2c-1f4e8d6a3c10"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("finalize-session", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--session", required=True, help="the session id")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    client = client_from(config_from(args))
    reply = client.post(f"/v1/sessions/{urllib.parse.quote(args.session, safe='')}/finalize", {})
    if reply.status == 404:
        raise NotFound(f"no session {args.session}")
    if not reply.ok:
        raise DaemonUnavailable(f"the daemon answered {reply.status}", detail=str(reply.body)[:200])
    if args.json:
        print_json(reply.body)
    else:
        print(reply.body["page"] or "nothing to compile: the session has no prompt and no tool use")
    return 0
