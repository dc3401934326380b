"""Backup and restore of a whole data dir while its daemon keeps serving.

An archive (``ai-memory-<UTC time>.tar.gz``) holds ``manifest.json`` first (ai-memory and
schema versions, creation time, the wiki's HEAD, and size and SHA-256 of every other member),
then ``db/memory.sqlite`` (SQLite's online backup API), ``wiki.bundle`` (every ref and commit),
``wiki/`` (the work tree as it was, committed or not), ``raw/`` (the journal), ``config.toml``
and, only when asked, ``token``. Restore verifies every checksum before it changes anything.

``create``: writing archives, the schedule's pruning, and ``latest_backup`` (for doctor).
``restore``: a verified archive into an empty or moved-aside data dir. ``archive``: the format.
"""

from ai_memory.backup.create import (
    BackupReport, backup_due_in, create_backup, latest_backup, list_backups, prune_backups, scheduled_backup,
)
from ai_memory.backup.restore import RestoreReport, restore_archive

__all__ = [
    "BackupReport", "RestoreReport", "backup_due_in", "create_backup", "latest_backup", "list_backups",
    "prune_backups", "restore_archive", "scheduled_backup",
]
