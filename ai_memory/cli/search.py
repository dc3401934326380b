"""``ai-memory search "..."``: ask memory a question from the terminal."""

from __future__ import annotations

import argparse
import sys

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from, cwd_project

HELP = "search memory (the current project plus _global by default)"
EXAMPLE = 'example: ai-memory search "what did we decide about the token TTL" --explain'


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("query", help="what to look for, in words or identifiers")
    p.add_argument("--project", help="project to search (default: the one of the current directory)")
    p.add_argument("--all", action="store_true", help="search every project")
    p.add_argument("-k", type=int, default=10, help="how many hits (1-100, default 10)")
    p.add_argument("--explain", action="store_true", help="show how each score was made")
    p.add_argument("--as-of", help="answer from what memory knew then (ISO date or time)")
    p.add_argument("--json", action="store_true", help="print the raw reply as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    reply = api_from(args).query(args.query, project=args.project or cwd_project(), k=args.k,
                                 explain=args.explain, all=args.all, as_of=args.as_of)
    if args.json:
        print_json(reply)
        return 0
    hits, raw = reply["hits"], reply["raw_hits"]
    if reply.get("fallback") == "local":  # the server was not used: never pass this off as its answer
        print(f"fallback: local (lexical, not semantic): {reply['note']}", file=sys.stderr)
    if not hits and not raw:
        print("no matches", file=sys.stderr)
        return 0
    for i, hit in enumerate(hits, 1):
        pending = ", pending: not on the server yet" if hit.get("pending") else ""
        print(f"{i:>2}. {hit['title']}  ({hit['type']}, {hit['project']}, score {hit['score']}{pending})")
        print(f"    {hit['path'] or hit.get('id')}")
        print(f"    {hit['snippet'][:200]}")
        for ev in hit.get("evidence", [])[:2]:
            print(f"      > {ev['snippet'][:160]}")
        if args.explain and "explain" in hit:
            ex = hit["explain"]
            streams = ", ".join(f"{n} #{v['rank']}" for n, v in ex["streams"].items())
            feats = ", ".join(f"{k} {v}" for k, v in ex["features"].items() if v)
            print(f"      streams: {streams}; authority {ex['authority']}; {feats}")
    if raw:
        print("no page matched; observations:" if not hits else "observations:")
        for item in raw:
            print(f"  - {item['occurred_at'][:16]} {item['event']} ({item['session_id']}): {item['snippet'][:160]}")
    return 0
