"""``ai-memory sync [--remote URL]``: pull and push the wiki with a git remote.

Only the daemon writes the wiki: when one serves the data dir, it syncs (``POST /v1/sync``).
Otherwise this process syncs the data dir itself, holding the serve lock so that no daemon can
start mid-merge.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ai_memory.cli.common import config_from, print_json

if TYPE_CHECKING:
    from ai_memory.config import Config
    from ai_memory.core.wire import Synced

HELP = "pull and push the wiki with a git remote (both sides' edits kept; conflicts as conflict copies)"
EXAMPLE = ("example: ai-memory sync\n"
           "         ai-memory sync --remote git@github.com:me/memory-wiki.git --json")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("sync", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--remote", metavar="URL", help="git URL or path (default: sync.remote from config)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ai_memory import datadir

    config = config_from(args)
    report: Mapping[str, Any]
    if datadir.locked_pid(config.data_dir) is not None:
        report = _by_daemon(config, args.remote)
    else:
        report = _here(config, args.remote)
    if args.json:
        print_json(report)
    else:
        print(render(report))
    return 0


def _by_daemon(config: "Config", remote: str | None) -> "Synced":
    from ai_memory.client.api import MemoryAPI
    from ai_memory.client.http import DaemonClient
    from ai_memory.wiki.sync import MAX_ROUNDS

    # a sync is network-bound: wait as long as its rounds of fetch and push may take
    wait = config.sync.timeout_s * 2 * MAX_ROUNDS + config.client.timeout_s
    token = config.token_path.read_text().strip() if config.token_path.exists() else None
    return MemoryAPI(DaemonClient(config.url, token, wait)).sync(remote)


def _here(config: "Config", remote: str | None) -> dict[str, Any]:
    import asyncio

    from ai_memory.datadir import ServeLock, prepare
    from ai_memory.wiki.sync import sync_offline

    prepare(config.data_dir)
    lock = ServeLock(config.data_dir)
    lock.acquire()
    try:
        return asyncio.run(sync_offline(config, remote)).as_json()
    finally:
        lock.release()


def render(report: Mapping[str, Any]) -> str:
    merged = ", ".join(report["merges"]) or "nothing to merge"
    pushed = f"pushed {report['head'][:12]}" if report["pushed"] else "nothing to push"
    lines = [f"synced with {report['remote']} ({report['branch']}): {merged}; "
             f"{len(report['written'])} files written, {len(report['removed'])} removed; {pushed}"]
    lines += [f"conflict copy: {path} (both versions kept; see ai-memory lint)" for path in report["conflicts"]]
    return "\n".join(lines)
