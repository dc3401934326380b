"""``ai-memory feedback PAGE SIGNAL``: say whether a memory helped; it moves the page's salience."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

# The same four the daemon accepts (core.retention.FEEDBACK_DELTAS); spelled out so this verb
# stays light to import.
SIGNALS = ("helpful", "not_helpful", "stale", "wrong")
HELP = "rate a memory page: helpful, not_helpful, stale or wrong (moves its search rank and retention)"
EXAMPLE = "example: ai-memory feedback acme-api/decisions/token-ttl-1a2b3c4d.md helpful"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("feedback", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("page", help="a wiki path (<project>/<family>/<page>.md) or a memory id")
    p.add_argument("signal", choices=SIGNALS, help="what the page was worth")
    p.add_argument("--json", action="store_true", help="print {path, signal, salience_before, salience, ...}")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    done = api_from(args).feedback(args.page, args.signal)
    if args.json:
        print_json(done)
    else:
        print(f"{done['path']}: {done['signal']}, salience {done['salience_before']:.2f} -> {done['salience']:.2f}")
    return 0
