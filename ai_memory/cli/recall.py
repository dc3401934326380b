"""``ai-memory recall "a prompt"``: what memory would hand an agent beside that prompt, and why.

Shows, hands nothing over: no session records it. ``--explain`` adds the threshold and every
hit left out with the reason (not confident, far from the best, given already, over the budget)."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from, cwd_project

HELP = "what memory would hand an agent beside a prompt (prompt recall), without handing anything over"
EXAMPLE = 'example: ai-memory recall "why did we pin pygit2 below 2?" --explain'


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("recall", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("prompt", help="the prompt, as an agent would receive it")
    p.add_argument("--project", help="project (default: the one of the current directory)")
    p.add_argument("--explain", action="store_true", help="the threshold, and each hit left out with why")
    p.add_argument("--json", action="store_true", help="print the reply as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    reply = api_from(args).recall(args.prompt, project=args.project or cwd_project(), explain=args.explain)
    if args.json:
        print_json(reply)
        return 0
    print(reply["text"] or "nothing: memory would stay silent for this prompt")
    if args.explain:
        ex = reply.get("explain") or {}
        if ex.get("silent"):
            print(f"silent: {ex['silent']}")
        print(f"handed over from confidence {ex.get('min_confidence')} up, with a score from"
              f" {ex.get('min_ratio')} of the best hit's")
        stages = ex.get("stages_ms") or {}
        if stages:
            print(f"searched in {sum(stages.values()):.0f} ms: "
                  + ", ".join(f"{name} {ms:.1f}" for name, ms in stages.items()))
        print("        confidence  score  page")
        for item in reply["items"]:
            print(f"  given  {item['confidence']:>9.3f}  {item['score']:.3f}  {item['path']}")
        for left in ex.get("skipped") or []:
            print(f"  left   {left.get('confidence') or 0:>9.3f}  {left['score']:.3f}  {left['path']}: {left['why']}")
    return 0
