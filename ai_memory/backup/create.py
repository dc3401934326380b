"""Writing a backup of a data dir while its daemon serves, and keeping the newest few.

Runs in whichever process asks (the CLI, or the daemon's schedule): it only reads the data
dir, never takes the serve lock, and never goes through the writer.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ai_memory import __version__
from ai_memory.backup.archive import Manifest, file_entry, write_archive
from ai_memory.backup.gitbundle import create_bundle
from ai_memory.backup.snapshot import copy_file, copy_raw, copy_wiki_files, snapshot_db
from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.core.errors import BackupError

BACKUP_DIR = "backups"
PREFIX, SUFFIX = "ai-memory-", ".tar.gz"


@dataclass(frozen=True)
class BackupReport:
    path: str
    size: int
    members: int
    schema_version: int
    wiki_head: str
    includes_secrets: bool
    seconds: float


def default_target(data_dir: Path, now: datetime | None = None) -> Path:
    """``<data_dir>/backups/ai-memory-<UTC timestamp>.tar.gz``; names sort by time."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%S.%f")[:-3]
    return data_dir / BACKUP_DIR / f"{PREFIX}{stamp}Z{SUFFIX}"


def create_backup(config: Config, target: Path | None = None, *, include_secrets: bool = False,
                  show_progress: bool = False) -> BackupReport:
    """Snapshot the data dir into a verified archive at ``target`` (default: under backups/)."""
    started = time.monotonic()
    if not config.db_path.exists():
        raise BackupError("nothing to back up", detail=f"no database at {config.db_path}")
    target = (target or default_target(config.data_dir)).expanduser().resolve()
    if target.is_dir():  # --to a folder: the default name inside it
        target = target / default_target(config.data_dir).name
    if target.exists():
        raise BackupError("the backup target already exists", detail=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        staging = Path(tempfile.mkdtemp(prefix=".ai-memory-backup-", dir=target.parent))
    except OSError as exc:
        raise BackupError(f"cannot write to {target.parent}", detail=str(exc)) from exc
    try:
        manifest = _stage(config, staging, include_secrets, show_progress)
        write_archive(staging, manifest, target, show_progress)
    except OSError as exc:
        raise BackupError("the backup failed", detail=str(exc)) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return BackupReport(
        path=str(target), size=target.stat().st_size, members=len(manifest.files) + 1,
        schema_version=manifest.schema_version, wiki_head=manifest.wiki_head,
        includes_secrets=include_secrets, seconds=round(time.monotonic() - started, 3))


def _stage(config: Config, staging: Path, include_secrets: bool, show_progress: bool) -> Manifest:
    """Copy every part into ``staging`` (database first: see snapshot.py) and describe it."""
    created_at = now_iso()
    schema = snapshot_db(config.db_path, staging / "db" / config.db_path.name, show_progress)
    copy_raw(config.sub("raw"), staging / "raw")
    head = create_bundle(config.sub("wiki"), staging / "wiki.bundle")
    copy_wiki_files(config.sub("wiki"), staging / "wiki")
    copy_file(config.config_path, staging / "config.toml")
    if include_secrets and not copy_file(config.token_path, staging / "token"):
        raise BackupError("--include-secrets: there is no token to include", detail=str(config.token_path))
    files = {p.relative_to(staging).as_posix(): file_entry(p) for p in sorted(staging.rglob("*")) if p.is_file()}
    return Manifest(ai_memory_version=__version__, schema_version=schema, created_at=created_at,
                    wiki_head=head.commit, wiki_head_ref=head.ref, includes_secrets=include_secrets, files=files)


def list_backups(data_dir: Path) -> list[Path]:
    """The archives under ``<data_dir>/backups/``, oldest first (a ``.partial`` never counts)."""
    folder = data_dir / BACKUP_DIR
    if not folder.is_dir():
        return []
    found = [p for p in folder.glob(f"{PREFIX}*{SUFFIX}") if p.is_file()]
    return sorted(found, key=lambda p: (p.stat().st_mtime, p.name))


def latest_backup(data_dir: Path) -> tuple[Path, float] | None:
    """The newest archive under ``<data_dir>/backups/`` and its age in seconds, or None."""
    archives = list_backups(data_dir)
    if not archives:
        return None
    newest = archives[-1]
    return newest, max(0.0, time.time() - newest.stat().st_mtime)


def prune_backups(data_dir: Path, keep: int) -> list[Path]:
    """Delete all but the ``keep`` newest archives (``keep`` <= 0 keeps all); return the deleted."""
    if keep <= 0:
        return []
    doomed = list_backups(data_dir)[:-keep]
    for path in doomed:
        path.unlink(missing_ok=True)
    return doomed


def backup_due_in(data_dir: Path, interval_s: float) -> float:
    """Seconds until the next scheduled backup, counted from the newest archive, so that a
    restarted daemon neither backs up at every start nor resets the clock."""
    newest = latest_backup(data_dir)
    return 0.0 if newest is None else max(0.0, interval_s - newest[1])


def scheduled_backup(config: Config) -> tuple[BackupReport, list[Path]]:
    """One run of the daemon's schedule: a backup under backups/, then pruning to ``backup.keep``."""
    report = create_backup(config)
    return report, prune_backups(config.data_dir, config.backup.keep)
