"""``ai-memory handoff list|begin|accept|cancel``: leave work for the next agent, or take it up."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from ai_memory.cli.claim_actions import action_parser, add_cancel, add_list, print_cancelled
from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from, listing_project, text_arg

HELP = "hand work over between agents: list, begin, accept or cancel handoffs"
EXAMPLES = """examples:
  ai-memory handoff begin "Token refresh half done" --next-step "wire the refresh route" --file api/auth.py
  ai-memory handoff list --state open
  ai-memory handoff accept --agent codex
  ai-memory handoff cancel 01J9Z6Q4K8M2N3P5R7S9T1V3W5"""
# Mirrors coordination.handoffs.STATES (not imported here: it pulls in the store); a test keeps them equal.
STATES = ("open", "accepted", "expired", "cancelled")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("handoff", help=HELP, description=HELP, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add_list(actions, common, "handoff",
             "list handoffs you may see, newest first", "--all --state open",
             STATES, run_list)
    _begin(actions, common)
    _accept(actions, common)
    add_cancel(actions, common, "handoff", run_cancel)


def _begin(actions: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = action_parser(actions, common, "handoff", "begin", "leave a handoff for the next agent in this directory",
                      '"Token refresh half done" --next-step "wire the refresh route"')
    p.add_argument("summary", help="what was done and where it stands; - reads it from stdin")
    p.add_argument("--next-step", action="append", help="a next step (repeat for more)")
    p.add_argument("--open-question", action="append", help="an open question (repeat for more)")
    p.add_argument("--file", action="append", help="a file touched (repeat for more)")
    p.add_argument("--cwd", help="the directory it is for (default: the current one)")
    p.add_argument("--project", help="any session of this project may take it (instead of a directory)")
    p.add_argument("--to-agent", help="only this agent may take it (claude, codex, gemini, ...)")
    p.add_argument("--from-agent", help="who is handing off")
    p.add_argument("--model", help="the model that did the work")
    p.add_argument("--shared", action="store_true", help="visible to every owner, not only you")
    p.set_defaults(run=run_begin, usage=p.error)


def _accept(actions: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = action_parser(actions, common, "handoff", "accept", "claim the newest open handoff for this directory (once)",
                      "--agent codex")
    p.add_argument("--cwd", help="the directory to take a handoff for (default: the current one)")
    p.add_argument("--agent", help="who is taking it (a handoff for another agent is skipped)")
    p.add_argument("--session-id", help="the session taking it (default: a new cli-... id)")
    p.set_defaults(run=run_accept, usage=p.error)


def run_list(args: argparse.Namespace) -> int:
    found = api_from(args).handoff_list(project=listing_project(args), state=args.state)
    if args.json:
        print_json(found)
    elif not found:
        print("no handoffs")
    else:
        for handoff in found:
            print("\n".join(render(handoff, brief=True)))
    return 0


def run_begin(args: argparse.Namespace) -> int:
    import os

    summary = text_arg(args, args.summary, "the summary")
    cwd = args.cwd or (None if args.project else os.getcwd())
    handoff = api_from(args).handoff_begin(
        summary=summary, cwd=cwd, project=args.project, next_steps=args.next_step,
        open_questions=args.open_question, files_touched=args.file, to_agent=args.to_agent,
        from_agent=args.from_agent, model=args.model, shared=args.shared or None)
    if args.json:
        print_json(handoff)
    elif handoff.get("pending"):
        print(f"handoff {handoff['id']} is pending: {handoff.get('note')}")
    else:
        print(f"handoff {handoff['id']} is open for {handoff.get('cwd') or 'project ' + str(handoff['project'])}")
    return 0


def run_accept(args: argparse.Namespace) -> int:
    import os
    import uuid

    cwd = os.path.abspath(args.cwd or os.getcwd())
    session_id = args.session_id or f"cli-{uuid.uuid4().hex[:12]}"
    handoff = api_from(args).handoff_accept(cwd, session_id, agent=args.agent)
    if args.json:
        print_json({"handoff": handoff})
    elif handoff is None:
        print(f"no open handoff for {cwd}")
    else:
        print("\n".join(render(handoff, brief=False)))
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    return print_cancelled(args, "handoff", api_from(args).handoff_cancel(args.id))


def render(handoff: Mapping[str, Any], brief: bool) -> list[str]:
    where = handoff.get("cwd") or f"project {handoff.get('project')}"
    who = " → ".join(filter(None, (handoff.get("from_agent"), handoff.get("to_agent"))))
    head = f"{handoff['id']}  {handoff['state']}  {handoff.get('kind', '')}  {(handoff.get('created_at') or '')[:16]}"
    lines = [head + (f"  {who}" if who else ""), f"  {where}", f"  {handoff['summary']}"]
    if brief:
        return lines
    for key, label in (("next_steps", "next"), ("open_questions", "open question"), ("files_touched", "file")):
        lines += [f"  {label}: {item}" for item in handoff.get(key) or []]
    return lines
