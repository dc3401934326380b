"""``ai-memory import --agent claude PATH...``: backfill memory from Claude Code transcripts."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ai_memory.cli.common import client_from, config_from
from ai_memory.core.errors import DaemonUnavailable, InputError

HELP = "backfill from Claude Code transcript JSONL files (idempotent)"
EXAMPLE = "example: ai-memory import --agent claude ~/.claude/projects/-home-dev-acme-api/*.jsonl"
BATCH = 256


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("import", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--agent", required=True, choices=["claude"], help="whose transcript format")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="transcript .jsonl files")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ai_memory.core.transcript import ImportCounts, parse_transcript

    client = client_from(config_from(args))
    counts = ImportCounts()
    stored = duplicates = rejected = 0
    for path in args.paths:
        if not path.is_file():
            raise InputError(f"no such transcript file: {path}")
    for path in args.paths:
        with path.open("rb") as fh, tqdm(desc=path.name, unit=" events", file=sys.stderr,
                                        disable=not sys.stderr.isatty()) as bar:
            batch: list[dict] = []
            for payload in parse_transcript(iter(fh), counts):
                batch.append({"agent": args.agent, "idempotency_key": payload["idempotency_key"], "payload": payload})
                if len(batch) == BATCH:
                    s, d, r = _send(client, batch)
                    stored, duplicates, rejected = stored + s, duplicates + d, rejected + r
                    bar.update(len(batch))
                    batch = []
            if batch:
                s, d, r = _send(client, batch)
                stored, duplicates, rejected = stored + s, duplicates + d, rejected + r
                bar.update(len(batch))
    summary = {"files": len(args.paths), "lines": counts.lines, "events": counts.events,
               "stored": stored, "duplicates": duplicates, "rejected": rejected,
               "malformed_lines": counts.malformed, "skipped_lines": counts.skipped}
    if args.json:
        import json

        print(json.dumps(summary))
    else:
        print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items()))
    return 0


def _send(client, batch: list[dict]) -> tuple[int, int, int]:
    """Post one batch, retrying items the daemon was too busy to take (429) after a pause."""
    import time

    pending = batch
    stored = duplicates = rejected = 0
    for _ in range(50):
        try:
            reply = client.post("/hook/batch", pending)
        except DaemonUnavailable:
            raise DaemonUnavailable(f"the daemon is not running at {client.url}",
                                    detail="start it with: ai-memory serve") from None
        if not reply.ok:
            raise DaemonUnavailable(f"the daemon refused the batch ({reply.status})", detail=str(reply.body)[:200])
        retry = []
        for item, result in zip(pending, reply.body["results"]):
            if result["status"] == 202:
                stored += 1
            elif result["status"] == 200:
                duplicates += 1
            elif result["status"] in (429, 503):
                retry.append(item)
            else:
                rejected += 1
        if not retry:
            break
        pending = retry
        time.sleep(0.5)
    return stored, duplicates, rejected
