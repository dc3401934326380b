"""Restoring an archive into a data dir: all checks first, then a staged dir swapped in.

Nothing at the target changes until the archive has been verified whole, extracted into a
staging dir beside the target (verified again as it is written), its wiki rebuilt from the
bundle and its index brought in step with its files. Only then is the staged dir renamed
into place, after the old one (with ``--force``) was renamed aside.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ai_memory import datadir
from ai_memory.backup.archive import Manifest, extract_verified, verify_archive
from ai_memory.backup.gitbundle import WikiHead, restore_bundle
from ai_memory.config import network_settings
from ai_memory.core.errors import BackupError, ConfigError, Conflict, DataDirLocked
from ai_memory.core.page import parse_page
from ai_memory.store.connection import immediate_transaction, open_write_connection
from ai_memory.store.migrations import MIGRATIONS, migrate
from ai_memory.store.pages import file_states, index_page_rows, remove_page_rows, set_page_stat
from ai_memory.wiki.files import iter_pages, read_file
from ai_memory.wiki.reindex import RebuildReport, replay_journal

DB_RELATIVE = Path("db") / "memory.sqlite"


@dataclass(frozen=True)
class RestoreReport:
    data_dir: str
    moved_aside: str | None
    files: int
    wiki_head: str
    created_at: str
    observations_replayed: int
    pages_reindexed: int
    token: str  # "archive", "kept" (the replaced dir's) or "new"
    config: str  # "archive", "kept" (the replaced dir's) or "new" (the archive's is kept aside, unread)


def restore_archive(archive: Path, target: Path, *, force: bool = False, show_progress: bool = False,
                    with_config: bool = False, with_token: bool = False,
                    confirm: Callable[[list[tuple[str, Any]]], bool] = lambda reaching: False) -> RestoreReport:
    """Restore ``archive`` into ``target``; see the module docstring for the order of things.

    An archive is someone else's until proven otherwise: its ``config.toml`` and ``token`` are
    taken only when asked (``with_config``, ``with_token``), and a config that reaches the
    network (``config.network_settings``: a model provider to send a key to, a remote to push
    the wiki to, an address to listen on) only when ``confirm`` accepts those keys. Otherwise
    this machine's config and token stay (or new ones are made); the archive's config is kept
    beside it as ``config.toml.from-backup``, read by nothing."""
    if not archive.is_file():
        raise BackupError("no such archive", detail=str(archive))
    if target.exists() and not target.is_dir():
        raise BackupError("the restore target is not a directory", detail=str(target))
    refuse_running(target)
    occupied = target.exists() and any(target.iterdir())
    if occupied and not force:
        raise Conflict(f"{target} is not empty", detail="restore into an empty dir, or pass --force to move it aside")
    manifest = verify_archive(archive, show_progress)  # a corrupt archive changes nothing
    if manifest.schema_version > MIGRATIONS[-1][0]:
        raise BackupError(f"the archive's database schema v{manifest.schema_version} is newer than this ai-memory",
                          detail=f"written by ai-memory {manifest.ai_memory_version}; upgrade first")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.restoring-", dir=target.parent))
    try:
        extract_verified(archive, staging, show_progress)
        restore_bundle(staging / "wiki.bundle", staging / "wiki", WikiHead(manifest.wiki_head, manifest.wiki_head_ref))
        (staging / "wiki.bundle").unlink()
        token = _settle_token(manifest, staging, target if occupied else None, with_token)
        config = _settle_config(staging, target if occupied else None, with_config, confirm)
        datadir.prepare(staging)  # spool/, logs/, models/; a fresh token when none came along
        replayed, reindexed = sync_index(staging)
        moved = _swap_in(staging, target, occupied)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)  # the target is untouched until _swap_in
        if isinstance(exc, OSError):
            raise BackupError(f"could not restore into {target}", detail=str(exc)) from exc
        raise
    return RestoreReport(data_dir=str(target), moved_aside=str(moved) if moved else None,
                         files=len(manifest.files), wiki_head=manifest.wiki_head, created_at=manifest.created_at,
                         observations_replayed=replayed, pages_reindexed=reindexed, token=token, config=config)


def refuse_running(target: Path) -> None:
    """A daemon serving ``target`` holds its serve.lock: never restore under it."""
    pid = datadir.locked_pid(target) if target.is_dir() else None
    if pid is not None:
        raise DataDirLocked(f"an ai-memory daemon (pid {pid}) is serving {target}",
                            detail="stop it before restoring")


def _settle_token(manifest: Manifest, staging: Path, replaced: Path | None, with_token: bool) -> str:
    """The archive's token only when asked (it would be the admin token of this daemon); else a
    restore over an existing dir keeps that dir's, so agents' hooks on this machine keep
    working; elsewhere prepare makes a new one."""
    if "token" in manifest.files and with_token:
        return "archive"
    (staging / "token").unlink(missing_ok=True)
    if replaced is not None and (replaced / "token").is_file():
        shutil.copyfile(replaced / "token", staging / "token")
        (staging / "token").chmod(0o600)
        return "kept"
    return "new"


def _settle_config(staging: Path, replaced: Path | None, with_config: bool,
                   confirm: Callable[[list[tuple[str, Any]]], bool]) -> str:
    """Which config.toml the restored dir gets (see ``restore_archive``)."""
    archived = staging / "config.toml"
    if with_config and archived.is_file():
        try:
            reaching = network_settings(archived)
        except ConfigError as exc:
            raise BackupError("the archive's config.toml cannot be read", detail=exc.message) from exc
        if reaching and not confirm(reaching):
            names = ", ".join(key for key, _ in reaching)
            raise BackupError(f"the archive's config.toml reaches the network ({names}): not restored",
                              detail="confirm it on a terminal, or restore without --with-config"
                                     " (this machine's config is kept)")
        return "archive"
    if archived.is_file():
        os.replace(archived, staging / "config.toml.from-backup")
    if replaced is not None and (replaced / "config.toml").is_file():
        shutil.copyfile(replaced / "config.toml", archived)
        archived.chmod(0o600)
        return "kept"
    return "new"


def sync_index(data_dir: Path) -> tuple[int, int]:
    """Bring the restored database in step with the restored files and journal.

    The database copy is a moment older than the journal and the wiki files (see snapshot.py):
    replay the journal (ids and idempotency keys dedupe) and re-index the pages that differ.
    Like ``reindex``, this opens a writable connection, to a file no daemon can see yet.
    """
    try:
        conn = open_write_connection(data_dir / DB_RELATIVE)
    except sqlite3.Error as exc:
        raise BackupError("cannot open the restored database", detail=str(exc)) from exc
    try:
        migrate(conn)  # an archive from an older ai-memory: the schema this code expects
        with immediate_transaction(conn):
            report = RebuildReport()
            replay_journal(conn, data_dir / "raw", report)
            reindexed = _sync_pages(conn, data_dir / "wiki")
    except sqlite3.Error as exc:
        raise BackupError("cannot bring the restored index in step with its files", detail=str(exc)) from exc
    finally:
        conn.close()
    return report.observations, reindexed


def _sync_pages(conn: sqlite3.Connection, wiki_dir: Path) -> int:
    """Index pages changed or added since the database copy, drop rows of removed ones."""
    states = file_states(conn)
    on_disk = dict(iter_pages(wiki_dir))
    changed = 0
    for rel in sorted(on_disk):
        data, st = read_file(wiki_dir, rel)
        known = states.get(rel)
        if known is not None and (known.mtime_ns, known.size) == (st.st_mtime_ns, st.st_size):
            continue
        page = parse_page(rel, data)
        if page.generated:  # a generated index.md is derived, not a page
            continue
        if known is not None and known.content_hash == page.content_hash:
            # Same page, new stat (extraction rounds mtimes): record it, or every reconcile
            # of the restored daemon would re-read and re-hash the whole wiki.
            set_page_stat(conn, rel, st.st_mtime_ns, st.st_size)
            continue
        index_page_rows(conn, page, st.st_mtime_ns, st.st_size)
        changed += 1
    for rel in sorted(set(states) - set(on_disk)):
        remove_page_rows(conn, rel)
        changed += 1
    return changed


def _swap_in(staging: Path, target: Path, occupied: bool) -> Path | None:
    """Rename the old dir aside (holding its serve lock, so no daemon starts on it meanwhile)
    and the staged dir into place; return where the old dir went."""
    if not occupied:
        if target.exists():
            target.rmdir()  # empty, checked before
        staging.rename(target)
        return None
    lock = datadir.ServeLock(target)
    lock.acquire()  # DataDirLocked if a daemon started since the first check
    try:
        aside = _aside_name(target)
        target.rename(aside)
        try:
            staging.rename(target)
        except OSError as exc:
            raise BackupError(f"could not move the restored dir into place; the old one is at {aside}",
                              detail=str(exc)) from exc
    finally:
        lock.release()
    return aside


def _aside_name(target: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = target.with_name(f"{target.name}.before-restore-{stamp}")
    n = 1
    while aside.exists():  # two restores within one second
        aside = target.with_name(f"{target.name}.before-restore-{stamp}-{n}")
        n += 1
    return aside
