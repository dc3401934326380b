"""The ``ai-memory`` command: argument parsing and dispatch to one module per verb.

Verb modules import only the standard library at module level; heavy imports (aiohttp, the
store, torch) happen inside their ``run`` so that light verbs such as ``hook`` start fast.
Exit codes: 0 success, 1 failure, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from collections.abc import Iterator, Sequence

from ai_memory import __version__
from ai_memory.cli import (
    correct, delete, doctor, finalize_session, handoff, hook, import_transcripts, install_hooks, install_mcp,
    install_rules, mcp_server, message, meta, read, recent, reindex, search, serve, status, write,
)
from ai_memory.cli import feedback, forget_sweep
from ai_memory.cli import lint
from ai_memory.cli import backup, restore
from ai_memory.cli import sync
from ai_memory.cli import audit, user
from ai_memory.cli import breaker, outbox
from ai_memory.cli import completions
from ai_memory.core.errors import AiMemoryError, ConfigError

# Help lists verbs in this order: the daemon, memory for people, coordination, wiring agents, operations.
VERBS = (
    serve, status, search, read, recent, write, correct, delete, feedback, meta, handoff, message, mcp_server,
    install_hooks, install_mcp, install_rules, hook, import_transcripts, doctor, lint, reindex, forget_sweep,
    finalize_session, backup, restore, sync, user, audit, breaker, outbox, completions,
)
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: this parser's usage, one line, exit 2
        self.print_usage(sys.stderr)
        print(f"ai-memory: error: {_closest_choice(message)}", file=sys.stderr)
        raise SystemExit(2)


def _closest_choice(message: str) -> str:
    """argparse's "invalid choice: 'serch' (choose from 'serve', ...)" as "... did you mean 'search'?"."""
    match = _INVALID_CHOICE.search(message)
    if match is None:
        return message
    choices = re.findall(r"'([^']*)'", match.group(2))
    close = difflib.get_close_matches(match.group(1), choices, n=1, cutoff=0.6)
    what = message[:match.start()].rstrip(": ")
    if close:
        return f"{what}: unknown {match.group(1)!r}; did you mean {close[0]!r}?"
    return f"{what}: unknown {match.group(1)!r} (choose from {', '.join(choices)})"


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and every verb's (and sub-verb's) parser under it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                yield from _parsers(child)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", help="data directory (default: $AI_MEMORY_DATA_DIR or ~/.local/share/ai-memory)")
    common.add_argument("--url", help="daemon URL (default: from config, http://127.0.0.1:49374)")
    parser = _Parser(prog="ai-memory", description="Local-first memory daemon for AI coding agents.")
    parser.add_argument("--version", action="version", version=f"ai-memory {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for verb in VERBS:
        verb.register(sub, common)
    for each in _parsers(parser):  # an error found after parsing shows the verb's own usage
        each.set_defaults(usage=each.error)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # Known arguments first: an unknown option is then reported by the verb's parser, with the
    # verb's usage, instead of by the top-level one.
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        args.usage(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.run(args))
    except ConfigError as exc:
        print(f"ai-memory: {exc.message}" + (f" ({exc.detail})" if exc.detail else ""), file=sys.stderr)
        return 2
    except AiMemoryError as exc:
        print(f"ai-memory: {exc.message}" + (f" ({exc.detail})" if exc.detail else ""), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def entry() -> None:
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`ai-memory recent | head -2`): what it wanted it has. Point
        # stdout at /dev/null so the interpreter's last flush cannot fail again, and end quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
