"""Showing and applying planned file changes for the install verbs: a diff per file
on ``--dry-run``, else one line per file saying what was done (and where the backup went)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ai_memory.client.agent_settings import FileChange, unified_diff

Apply = Callable[[Iterable[FileChange], str], list[tuple[FileChange, Path | None]]]


def print_diffs(changes: list[FileChange]) -> None:
    for change in changes:
        if change.changed:
            sys.stdout.write(unified_diff(change) or f"changes {change.path}: the token's value only\n")
        else:
            print(f"{'absent' if change.before is None else 'unchanged'} {change.path}")
        for note in change.notes:
            print(f"note: {note}")


def apply_and_report(changes: list[FileChange], apply: Apply) -> None:
    applied = apply(changes, time.strftime("%Y%m%dT%H%M%S"))
    written = dict((c.path, backup) for c, backup in applied)
    done = {c.path: c for c, _ in applied}  # as applied: with the notes the writing added
    for change in (done.get(c.path, c) for c in changes):
        if change.path not in written:
            print(f"{'absent' if change.before is None else 'unchanged'} {change.path}")
        elif change.before is None:
            print(f"created {change.path}")
        elif change.after == "":
            print(f"removed {change.path} (it held only ai-memory's block; backup: {written[change.path]})")
        else:
            print(f"updated {change.path} (backup: {written[change.path]})")
        for note in change.notes:
            print(f"note: {note}")
