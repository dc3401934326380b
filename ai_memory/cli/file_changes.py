"""Showing and applying planned file changes for install-hooks, install-rules and install-mcp: a
diff per file on ``--dry-run``, else one line per file saying what was done (and where the
backup went: under the data dir, never beside the file)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from ai_memory.client.agent_settings import FileChange, unified_diff


def print_diffs(changes: list[FileChange]) -> None:
    for change in changes:
        if change.changed:
            sys.stdout.write(unified_diff(change) or f"changes {change.path}: the token's value only\n")
        else:
            print(f"{'absent' if change.before is None else 'unchanged'} {change.path}")
        for note in change.notes:
            print(f"note: {note}")


def apply_and_report(changes: list[FileChange], data_dir: Path) -> None:
    from ai_memory.client.settings_backup import SettingsBackups, apply_changes

    backups = SettingsBackups(data_dir, time.strftime("%Y%m%dT%H%M%S"))
    done = {applied.change.path: applied for applied in apply_changes(changes, backups)}
    for planned in changes:
        applied = done.get(planned.path)
        change = planned if applied is None else applied.change  # as applied: with the notes writing added
        if applied is None:
            print(f"{'absent' if change.before is None else 'unchanged'} {change.path}")
        elif change.before is None:
            print(f"created {change.path}")
        elif applied.removed:
            print(f"removed {change.path} (it held only what ai-memory put there; backup: {applied.backup})")
        else:
            print(f"updated {change.path} (backup: {applied.backup})")
        for note in change.notes:
            print(f"note: {note}")


def portable_note(data_dir: Path, runs: str) -> str:
    """What a project's committed file runs (``runs``), and which data dir that finds: each
    person's own, so this one only if it is the default or AI_MEMORY_DATA_DIR names it."""
    from ai_memory.config import default_data_dir

    default = default_data_dir({})
    shown = str(default).replace(str(Path.home()), "~", 1)
    note = (f"the project's file runs {runs} from each person's PATH; each person's install finds its own "
            f"data dir (AI_MEMORY_DATA_DIR, else {shown}) and daemon")
    return note if data_dir == default else f"{note}; {data_dir} is found where AI_MEMORY_DATA_DIR names it"
