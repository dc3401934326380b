"""``ai-memory user add|list|revoke``: team users and their tokens (admin only).

``add`` prints the new token once; only its SHA-256 is kept. Works with or without a running
daemon (see ``team_access``); a running daemon refuses a revoked token from the next request on.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from ai_memory.cli.common import print_json
from ai_memory.cli.team_access import daemon_api, offline

HELP = "manage team users: add (prints a token once), list, revoke"
EXAMPLES = """examples:
  ai-memory user add alice
  ai-memory user list --json
  ai-memory user revoke alice"""


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("user", help=HELP, description=HELP, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text, run in (("add", "add a user and print its token (shown only this once)", run_add),
                                 ("list", "list users: created, last used, revoked", run_list),
                                 ("revoke", "revoke a user's token at once", run_revoke)):
        q = actions.add_parser(name, parents=[common], help=help_text, description=help_text,
                               epilog=f"example: ai-memory user {name}" + ("" if name == "list" else " alice"))
        if name != "list":
            q.add_argument("name", help="the user's name (letters, digits, . _ @ -)")
        q.add_argument("--json", action="store_true", help="print the result as JSON")
        q.set_defaults(run=run, usage=q.error)


def run_add(args: argparse.Namespace) -> int:
    api = daemon_api(args)
    added: Mapping[str, Any]  # the daemon's answer, or the same fields from the data dir
    if api is not None:
        added = api.user_add(args.name)
    else:
        user, token = offline(args, lambda users, _r: users.add(args.name, by="local"))
        added = {"user": user, "token": token}
    if args.json:
        print_json(added)
    else:
        print(f"user {added['user']['name']} added; their token (shown only now, keep it secret):")
        print(added["token"])
    return 0


def run_list(args: argparse.Namespace) -> int:
    api = daemon_api(args)
    found: Sequence[Mapping[str, Any]] = api.users() if api is not None else offline(args, lambda users, _r: users.listing())
    if args.json:
        print_json(found)
    else:
        print("\n".join(render(found)) if found else "no users (only the admin token in the data dir)")
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    api = daemon_api(args)
    user: Mapping[str, Any]
    if api is not None:
        user = api.user_revoke(args.name)
    else:
        user = offline(args, lambda users, _r: users.revoke(args.name, by="local"))
    if args.json:
        print_json(user)
    else:
        print(f"user {user['name']} revoked at {user['revoked_at']}")
    return 0


def render(users: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"{'name':<20} {'created':<20} {'last used':<20} revoked"]
    for u in users:
        lines.append(f"{u['name']:<20} {(u['created_at'] or '-')[:19]:<20} {(u['last_used_at'] or '-')[:19]:<20} "
                     f"{(u['revoked_at'] or '-')[:19]}")
    return lines
