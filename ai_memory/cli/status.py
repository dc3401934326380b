"""``ai-memory status``: ask the running daemon how it is."""

from __future__ import annotations

import argparse
import time

from ai_memory.cli.common import plural, print_json
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
    for line in describe(body, api.url):
        print(line)
    return 0


def describe(body: dict, url: str) -> list[str]:
    """The status for a person: what is stored, what is broken, what is still waiting."""
    counts, wiki, w = body["counts"], body.get("wiki", {}), body["writer"]
    broken = wiki.get("broken_pages", [])
    lines = [
        f"ai-memory {body['version']} (pid {body['pid']}) at {url}, up {_duration(body['uptime_s'])}",
        f"data dir:     {body['data_dir']}",
        f"pages:        {plural(counts.get('pages', 0), 'page')}" + (f", {len(broken)} broken" if broken else ""),
        f"sessions:     {plural(counts['sessions'], 'session')}",
        f"observations: {plural(counts['observations'], 'event')}",
        f"embeddings:   {_embeddings(body.get('embeddings', {}))}",
        f"spool:        {_spool(body.get('spool', {}))}",
        f"writer:       queue {w['queue_depth']}, {plural(w['batches'], 'batch', 'batches')},"
        f" mean batch {w['mean_batch']}",
    ]
    llm = body.get("llm") or {}
    if llm.get("enabled") or llm.get("problem"):  # nothing new to read while [llm] is unset
        lines.insert(-1, f"llm:          {_llm(llm)}")
    lines += [f"  broken: {page['path']}: {'; '.join(page['problems'])}" for page in broken[:10]]
    if len(broken) > 10:
        lines.append(f"  ... and {len(broken) - 10} more (ai-memory lint lists them all)")
    lines += [f"  not written: {rel} (a file ai-memory did not write is there; see ai-memory lint)"
              for rel in wiki.get("blocked_indexes", [])]
    lines += [f"  projects file: {problem}" for problem in wiki.get("projects_file", [])]
    lines += [f"  {plural(left['pages'], 'page')} still under the old name {old}"
              f" (ai-memory project merge {old} {left['project']} brings them home)"
              for old, left in (wiki.get("pages_under_old_names") or {}).items()]
    lines += [f"  {plural(m['pages'], 'page')} in {m['folder']}/ say project: {m['project']}"
              f" (ai-memory lint says how to make them agree)" for m in wiki.get("folder_mismatches") or []]
    return lines


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    return f"{s // 3600}h {s % 3600 // 60}m" if s < 86400 else f"{s // 86400}d {s % 86400 // 3600}h"


def _embeddings(found: dict) -> str:
    if not found.get("enabled"):
        return "off"
    if found.get("error"):
        return f"failed: {found['error']}"
    backlog = found.get("backlog", {})
    waiting = f"{plural(backlog.get('chunks', 0), 'chunk')} and {plural(backlog.get('observations', 0), 'event')}"
    state = "loading the model"
    if found.get("ready"):
        state = f"ready ({found['precision']})" if found.get("precision") else "ready"
    return f"{state}; {waiting} waiting" if any(backlog.values()) else f"{state}; nothing waiting"


def _llm(found: dict) -> str:
    if not found.get("enabled"):
        return f"off: {found.get('problem')}"
    queue = found.get("queue", {})
    jobs = ", ".join(f"{queue.get(state, 0)} {state}" for state in ("pending", "running", "done", "failed", "capped"))
    check = found.get("check", "")
    line = f"{found.get('provider')} {found.get('model')} ({'reachable' if check == 'ok' else check}); jobs: {jobs}"
    cap = found.get("max_calls_per_day") or "no cap"
    line += f"; model calls today: {found.get('calls_today', 0)} of {cap}"
    return line + (f"; last error: {queue['last_error']}" if queue.get("last_error") else "")


def _spool(found: dict) -> str:
    waiting = found.get("backlog", 0)
    parts = [f"{plural(waiting, 'event')} waiting" if waiting else "empty",
             f"{plural(found.get('delivered', 0), 'event')} delivered"]
    if found.get("bad"):
        parts.append(f"{plural(found['bad'], 'bad file')} set aside in spool/bad")
    dropped = found.get("dropped_count_cap", 0) + found.get("dropped_age_cap", 0)
    if dropped:
        parts.append(f"{plural(dropped, 'event')} dropped by the spool's caps")
    return ", ".join(parts)


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
