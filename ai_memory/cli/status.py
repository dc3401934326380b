"""``ai-memory status``: ask the running daemon how it is."""

from __future__ import annotations

import argparse
import time

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from
from ai_memory.core.errors import AuthError, DaemonUnavailable

HELP = "show the running daemon's status"
EXAMPLE = "example: ai-memory status --json; in scripts: ai-memory serve & ai-memory status --wait 30"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("status", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--json", action="store_true", help="print the full status as JSON")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="wait up to SECONDS for a daemon that is still starting")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    api, body = _status(args, args.wait)
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


def _status(args: argparse.Namespace, wait_s: float):
    """(api, status); with ``wait_s``, retry while the daemon is still starting. The client is
    built afresh each time: a first start writes the token file only as it comes up."""
    deadline = time.monotonic() + wait_s
    while True:
        api = api_from(args)
        try:
            return api, api.status()
        except (DaemonUnavailable, AuthError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)
