"""The actions ``handoff`` and ``message`` share: each one's parser (with ``--json``), listing by
state, and cancelling by id."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import add_project_flags


def action_parser(actions: argparse._SubParsersAction, common: argparse.ArgumentParser, verb: str, name: str,
                  help_text: str, example: str) -> argparse.ArgumentParser:
    p = actions.add_parser(name, parents=[common], help=help_text, description=help_text,
                           epilog=f"example: ai-memory {verb} {name} {example}".rstrip())
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    return p


def add_list(actions: argparse._SubParsersAction, common: argparse.ArgumentParser, verb: str, help_text: str,
             example: str, states: tuple[str, ...], run: Callable[[argparse.Namespace], int]) -> None:
    p = action_parser(actions, common, verb, "list", help_text, example)
    add_project_flags(p, f"{verb}s")
    p.add_argument("--state", choices=states, help=f"only {verb}s in this state")
    p.set_defaults(run=run, usage=p.error)


def add_cancel(actions: argparse._SubParsersAction, common: argparse.ArgumentParser, verb: str,
               run: Callable[[argparse.Namespace], int]) -> None:
    p = action_parser(actions, common, verb, "cancel", f"cancel an open {verb}", "01J9Z6Q4K8M2N3P5R7S9T1V3W5")
    p.add_argument("id", help=f"the {verb}'s id (from {verb} list)")
    p.set_defaults(run=run, usage=p.error)


def print_cancelled(args: argparse.Namespace, verb: str, item: Mapping[str, Any]) -> int:
    if args.json:
        print_json(item)
    else:
        print(f"cancelled {verb} {item['id']}")
    return 0
