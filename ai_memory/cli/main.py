"""The ``ai-memory`` command: argument parsing and dispatch to one module per verb.

Verb modules import only the standard library at module level; heavy imports (aiohttp, the
store, the model) happen inside their ``run`` so that light verbs such as ``hook`` start fast.
Exit codes: 0 success, 1 failure, 2 usage or configuration error.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

from ai_memory.core.errors import AiMemoryError, ConfigError

TYPE_CHECKING = False  # not typing's: importing typing costs the hook's fast path ~10 ms
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

# Help lists verbs in this order: the daemon, memory for people, coordination, wiring agents, operations.
# Modules, by name under ai_memory.cli: each is imported only when the parser needs it.
VERBS = (
    "serve", "status", "search", "recall", "read", "page_history", "recent", "write", "correct", "delete", "feedback", "meta", "project", "ui", "handoff",
    "message", "mcp_server", "install_hooks", "install_mcp", "install_rules", "hook", "import_transcripts",
    "doctor", "service", "lint", "reindex", "forget_sweep", "finalize_session", "move_session", "backup", "restore", "sync", "user",
    "audit", "breaker", "outbox", "completions",
)
# Verbs an agent runs on every event or at every start: their parser holds only themselves, so
# no other verb module is imported (``ai-memory hook`` must answer in a few tens of ms).
FAST_VERBS = {"hook": "hook", "mcp": "mcp_server"}


def verb_module(name: str) -> ModuleType:
    return importlib.import_module(f"ai_memory.cli.{name}")


def build_parser(only: str | None = None) -> "argparse.ArgumentParser":
    """The whole command line, or (``only``) one verb's part of it."""
    from ai_memory.cli.parser import build

    return build([only] if only else list(VERBS), verb_module)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:  # before argparse: the plain form is exec'd into the shell client
        from ai_memory.cli.hook import exec_shell_client

        exec_shell_client(argv[1:])
    parser = build_parser(FAST_VERBS.get(argv[0]) if argv else None)
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
