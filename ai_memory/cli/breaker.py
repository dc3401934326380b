"""``ai-memory breaker [--reset] [--json]``: show or reset the client's circuit breaker."""

from __future__ import annotations

import argparse

from ai_memory.cli.common import config_from, print_json, settings_from

HELP = "show the client's circuit breaker for the configured daemon URL, or reset it"
EXAMPLE = "example: ai-memory breaker --reset   (the next call goes to the server again at once)"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("breaker", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--reset", action="store_true", help="close it now (failures and trips forgotten)")
    p.add_argument("--json", action="store_true", help="print the state as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    settings = settings_from(config_from(args))
    breaker = settings.breaker()
    if args.reset:
        breaker.reset()
    found = breaker.read()
    now_ms = breaker.now_ms()
    state = {**found.as_json(now_ms), "url": settings.url, "resilient": settings.resilient,
             "file": str(breaker.path)}
    if args.json:
        print_json(state)
        return 0
    mode = "on" if settings.resilient else f"off (client.resilient = {settings.mode}, a local URL)"
    print(f"breaker for {settings.url}: {state['state']}" + (" (reset)" if args.reset else ""))
    print(f"  resilient client: {mode}")
    if state["breaker_open"]:
        print(f"  open for {found.retry_in_ms(now_ms) / 1000:.1f} s more (trip {state['trips']})")
    if state["failures"]:
        print(f"  failures in a row: {state['failures']}")
    if state["last_error"]:
        print(f"  last error: {state['last_error']}")
    return 0
