"""``ai-memory completions bash|zsh|fish``: print a shell completion script for every verb.

The script is generated from the argument parser itself by shtab, so it can never fall behind
the verbs and their options; it is static (completing a word runs no Python).
"""

from __future__ import annotations

import argparse
import sys

HELP = "print a shell completion script (bash, zsh or fish)"
SHELLS = ("bash", "zsh", "fish")
EXAMPLE = ("example: ai-memory completions bash > ~/.local/share/bash-completion/completions/ai-memory;"
           " zsh: ai-memory completions zsh > ~/.zfunc/_ai-memory;"
           " fish: ai-memory completions fish > ~/.config/fish/completions/ai-memory.fish")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("completions", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    from ai_memory.cli.main import build_parser  # the parser of every verb, built as `main` builds it

    sys.stdout.write(shtab.complete(build_parser(), shell=args.shell))
    return 0
