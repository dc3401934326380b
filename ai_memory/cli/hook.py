"""``ai-memory hook --agent NAME [--event NAME]``: what an agent runs on each lifecycle event.

Reads the payload on stdin, spools it, delivers it without making the agent wait, and prints
what the agent expects. Always exits 0. Its parser holds only this verb (see cli/main.py).

The event is handed to the shell client (``hooks/ai-memory-hook``, exec'd in place of this
process): one implementation of spool, delivery and briefing, and no Python start-up beyond
the interpreter's own. Where no ``/bin/sh`` or script is found, the Python client in
``client/hook_client.py`` does the same in process.

Against a daemon on another machine (``client.resilient``), delivery is a detached drain of the
spool under the circuit breaker; ``ai-memory hook --drain`` runs that drain in the foreground
(what the shell hook client starts for a remote daemon).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: the fast path imports nothing it does not need
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from ai_memory.config import Config

HELP = "capture one agent hook event from stdin (used by installed hooks); --drain delivers the spool"
EXAMPLE = "example: echo '{\"session_id\":\"s1\",\"hook_event_name\":\"Stop\"}' | ai-memory hook --agent codex"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("hook", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--agent", default="unknown", help="claude, codex, gemini, ...")
    p.add_argument("--event", help="the event name when the payload does not carry one")
    p.add_argument("--drain", action="store_true",
                   help="deliver the spooled events to a remote daemon now (one drain at a time), then exit")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.drain:
        return _drain_now(args)
    _hand_to_shell_client(args)
    return _run_in_process(args)


_PLAIN_FLAGS = ("--agent", "--event", "--data-dir", "--url")


def exec_shell_client(argv: list[str]) -> None:
    """The fast path, before argparse is even imported: ``--agent A [--event E] [--data-dir D]
    [--url U]`` in any order replaces this process with the shell client. Anything else
    (``--help``, ``--drain``, ``--agent=A``, a typo) returns, for the full parser to handle."""
    if len(argv) % 2 or any(flag not in _PLAIN_FLAGS for flag in argv[::2]):
        return
    flags = dict(zip(argv[::2], argv[1::2]))
    _exec(flags.get("--agent", "unknown"), flags.get("--event"), flags.get("--data-dir"), flags.get("--url"))


def _hand_to_shell_client(args: argparse.Namespace) -> None:
    _exec(args.agent, args.event, args.data_dir, args.url)


def _exec(agent: str, event: str | None, data_dir: str | None, url: str | None) -> None:
    """Replace this process with the shell client; returns only when that cannot be done."""
    import os

    from ai_memory.client.hook_script import shell_argv

    beside = os.path.join(os.path.dirname(sys.executable), "ai-memory")  # this installation's command
    argv = shell_argv(agent, event, data_dir, url, beside if os.path.exists(beside) else None)
    if argv is None:
        return
    sys.stdout.flush()
    try:
        os.execv(argv[0], argv)
    except OSError:
        return


def _run_in_process(args: argparse.Namespace) -> int:
    from ai_memory.client.hook_client import run_hook
    from ai_memory.config import load_config

    try:
        config = load_config(args.data_dir, {"client.url": args.url})
        token = config.token_path.read_text().strip() if config.token_path.exists() else ""
        url, spool = config.url, config.sub("spool")
        drain, briefing = _remote_delivery(config, url, token)
        recall = config.recall.on_prompt
    except Exception:  # a hook never fails the agent: fall back to defaults
        from ai_memory.config import DEFAULT_PORT

        url, token, spool, drain, briefing, recall = f"http://127.0.0.1:{DEFAULT_PORT}", "", None, None, True, True
    stdin = sys.stdin.buffer.read()
    if spool is None:
        sys.stdout.write("{}\n")
        return 0
    return run_hook(agent=args.agent, event=args.event, stdin=stdin, url=url, token=token, spool_dir=spool,
                    drain=drain, briefing=briefing, recall=recall)


def _remote_delivery(config: "Config", url: str, token: str) -> tuple[Callable[[], None] | None, bool]:
    """(drain, briefing allowed): no drain for a local daemon, which drains its own spool."""
    from ai_memory.client.breaker import Breaker, BreakerPolicy
    from ai_memory.client.locality import resilience_on

    if not resilience_on(config.client.resilient, url):
        return None, True
    state_dir = config.data_dir / "client"
    open_ms = Breaker(state_dir, url, BreakerPolicy.from_section(config.client)).open_for_ms()

    def drain() -> None:  # runs in the detached child: the heavier imports happen there
        from ai_memory.client.hook_drain import drain_spool
        from ai_memory.client.resilient import ClientSettings

        drain_spool(ClientSettings.from_section(config.client, url, token or None, config.data_dir), config.sub("spool"))

    return drain, open_ms == 0


def _drain_now(args: argparse.Namespace) -> int:
    from ai_memory.cli.common import config_from, print_json, settings_from
    from ai_memory.client.hook_drain import drain_spool

    config = config_from(args)
    report = drain_spool(settings_from(config), config.sub("spool"))
    print_json(report.as_json())
    return 0
