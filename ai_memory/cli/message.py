"""``ai-memory message send|list|pop|cancel``: notes from one project to another, delivered once."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ai_memory.cli.claim_actions import action_parser, add_cancel, add_list, print_cancelled
from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from, cwd_project, listing_project, text_arg

if TYPE_CHECKING:
    from ai_memory.core.wire import Message

HELP = "leave notes for another project: send, list, pop (take, once) or cancel messages"
EXAMPLES = """examples:
  ai-memory message send acme-web "The /v2/token response now has expires_in; update the client."
  ai-memory message list --project acme-web
  ai-memory message pop --project acme-web --limit 5
  ai-memory message cancel 01J9Z6Q4K8M2N3P5R7S9T1V3W5"""
# Mirrors coordination.messages.STATES (not imported here: it pulls in the store); a test keeps them equal.
STATES = ("open", "popped", "expired", "cancelled")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("message", help=HELP, description=HELP, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _send(actions, common)
    add_list(actions, common, "message",
             "list messages, oldest first", "--project acme-web --state open",
             STATES, run_list)
    _pop(actions, common)
    add_cancel(actions, common, "message", run_cancel)


def _send(actions: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = action_parser(actions, common, "message", "send", "leave a message for another project's next session",
                      'acme-web "The /v2/token response now has expires_in."')
    p.add_argument("to_project", metavar="TO_PROJECT", help="the project to tell")
    p.add_argument("body", help="the message; - reads it from stdin")
    p.add_argument("--from-project", help="who is telling (default: the current directory's project)")
    p.add_argument("--from-agent", help="the agent or person sending it")
    p.add_argument("--ttl-s", type=int, help="seconds until it expires unread (default 14 days)")
    p.set_defaults(run=run_send, usage=p.error)


def _pop(actions: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = action_parser(actions, common, "message", "pop",
                      "take the oldest open messages of a project (each goes to one taker)",
                      "--project acme-web --limit 5")
    p.add_argument("--project", help="whose messages (default: the current directory's project)")
    p.add_argument("--limit", type=int, default=1, help="how many at most (default 1)")
    p.add_argument("--session-id", help="the session taking them")
    p.set_defaults(run=run_pop, usage=p.error)


def run_send(args: argparse.Namespace) -> int:
    body = text_arg(args, args.body, "the message")
    sent = api_from(args).message_send(to_project=args.to_project, body=body,
                                       from_project=args.from_project or cwd_project(),
                                       from_agent=args.from_agent, ttl_s=args.ttl_s)
    if args.json:
        print_json(sent)
    elif sent.get("pending"):
        print(f"message {sent['id']} to {sent['to_project']} is pending: {sent.get('note')}")
    else:
        expires = (sent.get("expires_at") or "")[:16].replace("T", " ")
        print(f"message {sent['id']} waits for {sent['to_project']}" + (f" until {expires}" if expires else ""))
    return 0


def run_list(args: argparse.Namespace) -> int:
    found = api_from(args).message_list(project=listing_project(args), state=args.state)
    _show(args, found, "no messages")
    return 0


def run_pop(args: argparse.Namespace) -> int:
    project = args.project or cwd_project()
    popped = api_from(args).message_pop(project, limit=args.limit, session_id=args.session_id)
    _show(args, popped, f"no open messages for {project}")
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    return print_cancelled(args, "message", api_from(args).message_cancel(args.id))


def _show(args: argparse.Namespace, messages: "list[Message]", empty: str) -> None:
    if args.json:
        print_json(messages)
        return
    if not messages:
        print(empty)
    for m in messages:
        sender = " ".join(filter(None, (m.get("from_project"), m.get("from_agent")))) or "?"
        print(f"{m['id']}  {m['state']}  {(m.get('created_at') or '')[:16]}  {sender} → {m['to_project']}")
        print(f"  {m['body']}")
