"""What the verbs that talk to the daemon share: the API from --data-dir/--url, the project a
command means when none is named, and text given as an argument or as ``-`` for stdin.

Usage errors found after parsing go through the verb's own parser (``args.usage``), so they
look and exit (2) exactly like argparse's.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ai_memory.cli.common import config_from, settings_from

if TYPE_CHECKING:
    from ai_memory.client.api import MemoryAPI


def api_from(args: argparse.Namespace) -> "MemoryAPI":
    """The plain API for a local daemon; the resilient one (breaker, outbox, fallback) for a remote one."""
    from ai_memory.client.offline import open_api

    return open_api(settings_from(config_from(args)))


def cwd_project() -> str:
    """The project of the current directory (marker, git remote, repository or directory name)."""
    from pathlib import Path

    from ai_memory.client.project import resolve_project

    return resolve_project(Path.cwd()).name


def listing_project(args: argparse.Namespace) -> str | None:
    """``--project``, else None for ``--all``, else the current directory's project."""
    if args.project:
        return str(args.project)
    return None if getattr(args, "all", False) else cwd_project()


def add_project_flags(p: argparse.ArgumentParser, what: str) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--project", help=f"{what} of this project (default: the current directory's)")
    group.add_argument("--all", action="store_true", help=f"{what} of every project")


def text_arg(args: argparse.Namespace, value: str, what: str) -> str:
    """``value`` itself, or stdin when it is ``-``; empty text is a usage error."""
    text = sys.stdin.read() if value == "-" else value
    if not text.strip():
        args.usage(f"{what} is empty" + (" (nothing on stdin)" if value == "-" else ""))
    return text.strip()
