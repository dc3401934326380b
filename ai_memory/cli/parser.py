"""The argument parser of ``ai-memory``: common flags, the verbs' subparsers, one-line usage errors.

Kept out of ``cli/main.py`` so that the hook's fast path never imports argparse.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import NoReturn

from ai_memory import __version__

_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # usage errors: this parser's usage, one line, exit 2
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


def build(verbs: list[str], module: Callable[[str], ModuleType]) -> argparse.ArgumentParser:
    """The command line with ``verbs`` (module names under ai_memory.cli), in that order."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", help="data directory (default: $AI_MEMORY_DATA_DIR or ~/.local/share/ai-memory)")
    common.add_argument("--url", help="daemon URL (default: the data dir's running daemon, else from config)")
    parser = _Parser(prog="ai-memory", description="Local-first memory daemon for AI coding agents.")
    parser.add_argument("--version", action="version", version=f"ai-memory {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    for name in verbs:
        module(name).register(sub, common)
    for each in _parsers(parser):  # an error found after parsing shows the verb's own usage
        each.set_defaults(usage=each.error)
    return parser
