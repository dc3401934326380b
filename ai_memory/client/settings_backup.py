"""Applying planned changes to agents' settings and rules files, with backups kept out of sight.

A backup never goes beside the user's file: in a project repository a ``settings.json.bak-*``
is litter that gets committed, and a backup of ``settings.local.json`` holds the token. Backups
go to ``<data_dir>/settings-backups/<stamp>/<the file's absolute path>`` (mode 0600).

``created.json`` there lists the files and folders installs created where there were none. An
uninstall that would leave one of those files with nothing in it (``{}``, or no text at all)
removes it instead, and then every folder an install made that is empty again.
A file that existed before ai-memory touched it is only ever edited, never removed this way.

A project's local file (``.claude/settings.local.json``) is listed in the repository's
``info/exclude`` before it is written: nothing else keeps it out of git in a repository Claude
Code did not set up.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ai_memory.client.agent_settings import FileChange, write_atomic
from ai_memory.client.git_exclude import exclude_locally
from ai_memory.core.errors import StorageError

BACKUP_DIR = "settings-backups"
LEDGER = "created.json"


@dataclass(frozen=True)
class Applied:
    """What happened to one changed file (the change as applied, with the notes writing added):
    its backup (None for a new file), and whether the file is gone (it held only what ai-memory
    put there)."""

    change: FileChange
    backup: Path | None
    removed: bool = False


class SettingsBackups:
    """Backups of one run (one timestamp) and the ledger of files installs created."""

    def __init__(self, data_dir: Path, stamp: str) -> None:
        self.root = data_dir / BACKUP_DIR
        self.stamp = stamp

    def save(self, path: Path) -> Path:
        """Copy ``path`` under this run's folder (numbered if that name is taken); the copy."""
        backup = self.root / self.stamp / str(path.resolve()).lstrip("/")
        n = 1
        while backup.exists():
            backup, n = backup.with_name(f"{path.name}.{n}"), n + 1
        try:
            backup.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copyfile(path, backup)
            os.chmod(backup, 0o600)
        except OSError as exc:
            raise StorageError(f"cannot back up {path} to {backup}", detail=str(exc)) from exc
        return backup

    def _ledger(self) -> dict[str, list[str]]:
        """{"files": [...], "folders": [...]}: what installs created (absolute paths)."""
        try:
            found = json.loads((self.root / LEDGER).read_text())
        except (OSError, ValueError):
            found = {}
        found = found if isinstance(found, dict) else {}
        return {key: [str(p) for p in found.get(key, []) if isinstance(p, str)] for key in ("files", "folders")}

    def _save_ledger(self, ledger: dict[str, list[str]]) -> None:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.root / LEDGER, json.dumps(ledger, indent=2) + "\n", private=True)

    def note_created(self, path: Path, folders: list[Path]) -> None:
        ledger = self._ledger()
        ledger["files"] = sorted({*ledger["files"], str(path)})
        ledger["folders"] = sorted({*ledger["folders"], *map(str, folders)})
        self._save_ledger(ledger)

    def was_created(self, path: Path) -> bool:
        return str(path) in self._ledger()["files"]

    def forget(self, path: Path) -> None:
        """``path`` is gone: drop it, and every folder an install made that is now empty."""
        ledger = self._ledger()
        ledger["files"] = [f for f in ledger["files"] if f != str(path)]
        for folder in sorted(ledger["folders"], key=len, reverse=True):  # deepest first
            try:
                Path(folder).rmdir()  # only an empty one: a folder someone else filled stays
            except FileNotFoundError:
                pass
            except OSError:
                continue
            ledger["folders"].remove(folder)
        self._save_ledger(ledger)


def leaves_nothing(text: str) -> bool:
    """A file with no content of anyone's: empty, or an empty JSON object."""
    return text.strip() in ("", "{}")


def apply_changes(changes: Iterable[FileChange], backups: SettingsBackups) -> list[Applied]:
    """Write every changed file atomically, backing up the old content first. A change to an
    empty text removes the file; so does a change to ``{}`` of a file an install created."""
    done = []
    for change in changes:
        if not change.changed:
            continue
        after = change.after
        assert after is not None
        real = change.path.resolve() if change.path.is_symlink() else change.path
        excluded = exclude_locally(change.path) if change.git_local and after else None
        if excluded is not None:
            change = replace(change, notes=(*change.notes, f"{change.path.name} is listed in {excluded}"))
        if change.before is not None and (after == "" or
                                          (leaves_nothing(after) and backups.was_created(change.path))):
            done.append(Applied(change, _remove(real, backups), removed=True))
            backups.forget(change.path)
            continue
        backup = backups.save(real) if change.before is not None else None
        if change.before is None:
            backups.note_created(change.path, _missing_folders(real.parent))
        write_atomic(real, after, change.private, change.executable)
        done.append(Applied(change, backup))
    return done


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and its ancestors that do not exist yet."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove(path: Path, backups: SettingsBackups) -> Path:
    """Delete ``path`` after backing it up; the backup."""
    backup = backups.save(path)
    try:
        path.unlink()
    except OSError as exc:
        raise StorageError(f"cannot remove {path}", detail=str(exc)) from exc
    return backup
