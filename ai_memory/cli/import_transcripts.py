"""``ai-memory import --agent claude PATH...``: backfill memory from Claude Code transcripts."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from ai_memory.cli.common import client_from, config_from
from ai_memory.core.errors import DaemonUnavailable, InputError

HELP = "backfill from Claude Code transcript JSONL files or folders of them (idempotent)"
EXAMPLE = "example: ai-memory import --agent claude ~/.claude/projects/   # every *.jsonl below, recursively"
BATCH = 256  # events per batch at most: the daemon's bound


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("import", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--agent", required=True, choices=["claude"], help="whose transcript format")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                   help="transcript .jsonl files, or folders searched recursively for them")
    p.add_argument("--json", action="store_true", help="print the counts as JSON")
    p.set_defaults(run=run)


def transcript_files(paths: list[Path]) -> list[Path]:
    """Each file as given, and every ``*.jsonl`` under each folder (sorted, each once)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
            if not inside:
                raise InputError(f"no .jsonl transcript files under {path}")
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(f"no such transcript file or folder: {path}")
    return list(dict.fromkeys(found))


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ai_memory.core.transcript import ImportCounts

    client = client_from(config_from(args))
    files = transcript_files(args.paths)
    counts = ImportCounts()
    totals = [0, 0, 0]  # stored, duplicates, rejected
    with tqdm(files, desc="import", unit=" files", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
        for path in bar:
            bar.set_postfix_str(f"{counts.events} events", refresh=False)
            for i, n in enumerate(_import_file(client, path, args.agent, counts)):
                totals[i] += n
    stored, duplicates, rejected = totals
    summary = {"files": len(files), "lines": counts.lines, "events": counts.events,
               "stored": stored, "duplicates": duplicates, "rejected": rejected,
               "malformed_lines": counts.malformed, "skipped_lines": counts.skipped,
               "unreadable_lines": counts.unreadable}
    if args.json:
        import json

        print(json.dumps(summary))
    else:
        print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items()))
    return 0


def _import_file(client, path: Path, agent: str, counts) -> tuple[int, int, int]:
    """Send one transcript's events in batches; (stored, duplicates, rejected)."""
    from ai_memory.core.transcript import parse_transcript

    totals = [0, 0, 0]
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}", detail=str(exc)) from exc
    named = len(counts.problems)
    with fh:
        items = ({"agent": agent, "idempotency_key": payload["idempotency_key"], "payload": payload}
                 for payload in parse_transcript(iter(fh), counts))
        for batch in _batches(items):
            totals = [a + b for a, b in zip(totals, _send(client, batch))]
    for problem in counts.problems[named:]:  # a line the import skipped, said where it is
        print(f"skipped {path} {problem}", file=sys.stderr)
    return totals[0], totals[1], totals[2]


def _batches(items: Iterator[dict]) -> Iterator[list[dict]]:
    """The items in batches the daemon takes: at most ``BATCH`` events, and half the bytes and
    JSON tokens it allows a batch (an event larger than that goes alone)."""
    import json

    from ai_memory.core.body_limits import BATCH as LIMIT, json_tokens

    batch: list[dict] = []
    size = tokens = 0
    for item in items:
        raw = json.dumps(item).encode()
        more = json_tokens(raw, LIMIT.max_tokens)
        if batch and (len(batch) == BATCH or size + len(raw) > LIMIT.max_bytes // 2
                      or tokens + more > LIMIT.max_tokens // 2):
            yield batch
            batch, size, tokens = [], 0, 0
        batch.append(item)
        size, tokens = size + len(raw), tokens + more
    if batch:
        yield batch


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
        if reply.status == 413 and len(pending) == 1:  # one event larger than a batch may be: refused alone
            return stored, duplicates, rejected + 1
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
