"""The ``ai-memory`` command: argument parsing and dispatch to one module per verb.

Verb modules import only the standard library at module level; heavy imports (aiohttp, the
store, torch) happen inside their ``run`` so that light verbs such as ``hook`` start fast.
Exit codes: 0 success, 1 failure, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

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
from ai_memory.core.errors import AiMemoryError, ConfigError

# Help lists verbs in this order: the daemon, memory for people, coordination, wiring agents, operations.
VERBS = (
    serve, status, search, read, recent, write, correct, delete, feedback, meta, handoff, message, mcp_server,
    install_hooks, install_mcp, install_rules, hook, import_transcripts, doctor, lint, reindex, forget_sweep,
    finalize_session, backup, restore, sync, user, audit, breaker, outbox,
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: one line, exit 2
        self.print_usage(sys.stderr)
        print(f"ai-memory: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", help="data directory (default: $AI_MEMORY_DATA_DIR or ~/.local/share/ai-memory)")
    common.add_argument("--url", help="daemon URL (default: from config, http://127.0.0.1:49374)")
    parser = _Parser(prog="ai-memory", description="Local-first memory daemon for AI coding agents.")
    parser.add_argument("--version", action="version", version=f"ai-memory {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for verb in VERBS:
        verb.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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
    sys.exit(main())
