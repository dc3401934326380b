"""``ai-memory outbox [--flush] [--json]``: writes made while the server was unreachable, and their fate."""

from __future__ import annotations

import argparse
from typing import Any

from ai_memory.cli.common import config_from, print_json, settings_from

HELP = "list the offline outbox (pending, synced, duplicate, failed writes); --flush sends what is pending"
EXAMPLE = "example: ai-memory outbox --flush   (send pending writes now, in order, then list them)"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("outbox", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--flush", action="store_true", help="send pending entries now, in order (the circuit breaker applies)")
    p.add_argument("--state", choices=("pending", "synced", "duplicate", "failed"), help="only entries in this state")
    p.add_argument("--json", action="store_true", help="print {flush, entries} as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    from ai_memory.client.offline import ResilientAPI
    from ai_memory.client.outbox import Outbox

    settings = settings_from(config_from(args))
    report = None
    if args.flush:
        report = ResilientAPI(settings, flush_now=False).flush_outbox().as_json()
    entries = [e.as_json() for e in Outbox(settings.state_dir).entries(args.state)]
    if args.json:
        print_json({"flush": report, "entries": entries})
        return 0
    if report is not None:
        print(_flush_line(report))
    _print_entries(entries)
    return 0


def _flush_line(report: dict[str, Any]) -> str:
    if report["skipped"]:
        return "flush: another process is flushing now"
    line = f"flush: sent {len(report['sent'])}"
    return line + (f"; stopped: {report['stopped']}" if report["stopped"] else "")


def _print_entries(entries: list[dict[str, Any]]) -> None:
    if not entries:
        print("the outbox is empty")
        return
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry["state"]] = counts.get(entry["state"], 0) + 1
        target = entry["server_id"] and f" -> {entry['server_id']}" or ""
        reason = f"  ({entry['reason']})" if entry["reason"] and entry["state"] != "synced" else ""
        print(f"{entry['state']:<9} {entry['kind']:<7} {entry['local_id']}{target}  {entry['title'][:60]}{reason}")
    print(", ".join(f"{n} {state}" for state, n in counts.items()))
