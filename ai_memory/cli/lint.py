"""``ai-memory lint``: the wiki's defects, each naming its page and a fix; exit 1 when any.

The running daemon lints its own index (``GET /v1/lint``). With no daemon on the data dir, the
verb lints the files and the index on disk itself: the same code, read-only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from ai_memory.cli.common import config_from, print_json
from ai_memory.cli.daemon_args import api_from
from ai_memory.core.errors import DaemonUnavailable

HELP = "find contradictions, broken links, orphans, duplicates, expired, broken and oversized pages, drift"
EXAMPLE = "example: ai-memory lint --json"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("lint", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    report: Mapping[str, Any]  # the daemon's answer, or the same fields linted here
    try:
        report = api_from(args).lint()
    except DaemonUnavailable as exc:
        report = _offline(args, exc)
    if args.json:
        print_json(report)
    else:
        print("\n".join(render(report)))
    return 0 if report["clean"] else 1


def _offline(args: argparse.Namespace, unreachable: DaemonUnavailable) -> dict[str, Any]:
    """Lint the data dir directly, but only when no daemon holds it (else: report it unreachable)."""
    from ai_memory import datadir
    from ai_memory.wiki.lint import lint

    config = config_from(args)
    if datadir.locked_pid(config.data_dir) is not None or not config.db_path.exists():
        raise unreachable
    # a notice, not an error: on stdout, except where stdout is the JSON a script reads
    print(f"the daemon is not running; linting {config.data_dir} directly",
          file=sys.stderr if args.json else sys.stdout)
    return lint(config.sub("wiki"), config.sub("raw"), config.db_path).as_dict()


def render(report: Mapping[str, Any]) -> list[str]:
    lines = []
    for f in report["findings"]:
        lines += [f"{f['rule']}: {f['path']}: {f['detail']}", f"   fix: {f['fix']}"]
    if report["clean"]:
        lines.append(f"no findings in {report['pages']} pages")
    else:
        counts = ", ".join(f"{rule} {n}" for rule, n in report["counts"].items())
        lines.append(f"{len(report['findings'])} findings in {report['pages']} pages ({counts})")
    return lines
