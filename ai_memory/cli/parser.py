"""The argument parser of ``ai-memory``: common flags, the verbs' subparsers, one-line usage errors.

Kept out of ``cli/main.py`` so that the hook's fast path never imports argparse.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from types import ModuleType

from ai_memory import __version__


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors: one line, exit 2
        self.print_usage(sys.stderr)
        print(f"ai-memory: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build(verbs: list[str], module: Callable[[str], ModuleType]) -> argparse.ArgumentParser:
    """The command line with ``verbs`` (module names under ai_memory.cli), in that order."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", help="data directory (default: $AI_MEMORY_DATA_DIR or ~/.local/share/ai-memory)")
    common.add_argument("--url", help="daemon URL (default: from config, http://127.0.0.1:49374)")
    parser = _Parser(prog="ai-memory", description="Local-first memory daemon for AI coding agents.")
    parser.add_argument("--version", action="version", version=f"ai-memory {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for name in verbs:
        module(name).register(sub, common)
    return parser
