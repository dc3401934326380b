"""``ai-memory status``: ask the running daemon how it is."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

HELP = "show the running daemon's status"
EXAMPLE = "example: ai-memory status --json"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--json", action="store_true", help="print the full status as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    api = api_from(args)
    body = api.status()
    if args.json:
        print_json(body)
        return 0
    w = body["writer"]
    print(f"ai-memory {body['version']} (pid {body['pid']}) at {api.url}, up {body['uptime_s']:.0f}s")
    print(f"data dir:     {body['data_dir']}")
    print(f"sessions:     {body['counts']['sessions']}")
    print(f"observations: {body['counts']['observations']}")
    print(f"writer:       queue {w['queue_depth']}, {w['batches']} batches, mean batch {w['mean_batch']}")
    return 0
