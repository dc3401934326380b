"""``ai-memory hook --agent NAME [--event NAME]``: what an agent runs on each lifecycle event.

Reads the payload on stdin, spools it, delivers it without making the agent wait, and prints
what the agent expects. Always exits 0. Kept off argparse's full verb table: see cli/main.py.
"""

from __future__ import annotations

import argparse
import sys

HELP = "capture one agent hook event from stdin (used by installed hooks)"
EXAMPLE = "example: echo '{\"session_id\":\"s1\",\"hook_event_name\":\"Stop\"}' | ai-memory hook --agent codex"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("hook", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--agent", default="unknown", help="claude, codex, gemini, ...")
    p.add_argument("--event", help="the event name when the payload does not carry one")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ai_memory.client.hook_client import run_hook
    from ai_memory.config import load_config

    try:
        config = load_config(args.data_dir, {"client.url": args.url})
        token = config.token_path.read_text().strip() if config.token_path.exists() else ""
        url, spool = config.url, config.sub("spool")
    except Exception:  # a hook never fails the agent: fall back to defaults
        from ai_memory.config import DEFAULT_PORT

        url, token, spool = f"http://127.0.0.1:{DEFAULT_PORT}", "", None
    stdin = sys.stdin.buffer.read()
    if spool is None:
        sys.stdout.write("{}\n")
        return 0
    return run_hook(agent=args.agent, event=args.event, stdin=stdin, url=url, token=token, spool_dir=spool)
