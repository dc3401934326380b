"""``ai-memory reindex [--check]``: rebuild the index from the wiki files and the raw journal."""

from __future__ import annotations

import argparse
import json
import sys

from ai_memory.cli.common import client_from, config_from, plural
from ai_memory.core.errors import DaemonUnavailable

HELP = "rebuild the database from wiki/ and raw/ (--check: report drift, change nothing)"
EXAMPLE = "example: ai-memory reindex --check"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("reindex", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--check", action="store_true", help="report every difference; exit 1 on drift")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ai_memory import datadir

    config = config_from(args)
    if args.check:
        return _check(config, args.json)
    if datadir.locked_pid(config.data_dir) is not None:
        reply = client_from(config).post("/v1/reindex", {})  # the daemon rebuilds and swaps itself
        if not reply.ok:
            raise DaemonUnavailable(f"the daemon could not reindex ({reply.status})", detail=str(reply.body)[:200])
        report = reply.body
    else:
        report = _offline(config)
    print(json.dumps(report) if args.json else
          f"reindexed {plural(report['pages'], 'page')} ({report['broken_pages']} broken) and {plural(report['observations'], 'event')}")
    return 0


def _offline(config) -> dict:
    from ai_memory.datadir import ServeLock, prepare
    from ai_memory.wiki.reindex import rebuild, swap_in
    from pathlib import Path

    prepare(config.data_dir)
    lock = ServeLock(config.data_dir)
    lock.acquire()  # no daemon may start while the file is swapped
    try:
        report = rebuild(config.sub("wiki"), config.sub("raw"), config.db_path, show_progress=sys.stderr.isatty())
        swap_in(Path(report.path), config.db_path)
    finally:
        lock.release()
    return {"pages": report.pages, "broken_pages": report.broken_pages,
            "observations": report.observations, "rows_only_in_old_file": report.rows_only_in_old_file,
            "vector_links_kept": report.vector_links_kept}


def _check(config, as_json: bool) -> int:
    from ai_memory.wiki.reindex import check

    drift = check(config.sub("wiki"), config.sub("raw"), config.db_path)
    if as_json:
        print(json.dumps({"clean": drift.clean, "differences": drift.differences}))
    else:
        for line in drift.differences:
            print(line)
        print("no drift" if drift.clean else plural(len(drift.differences), "difference"))
    return 0 if drift.clean else 1
