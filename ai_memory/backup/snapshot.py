"""Copying a live data dir into a staging dir, without stopping or locking out the daemon.

Order matters, because the parts cannot be frozen together: the database is copied first, then
the raw journal. The writer journals every batch before it commits it, so the journal copy
holds every observation of the database copy (and perhaps a few later ones, which restore
replays). Wiki files and the index may drift by the pages written during the backup; restore
reconciles them, as the daemon does at start.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path

from tqdm import tqdm

from ai_memory.core.errors import BackupError
from ai_memory.store.connection import open_read_connection
from ai_memory.store.snapshot import copy_database
from ai_memory.wiki.files import TEMP_PREFIX, unsafe_part

PAGES_PER_STEP = 1024  # 4 MiB at the default page size: progress without a step per page
TAIL_CHUNK = 1 << 16


def snapshot_db(db_path: Path, dest: Path, show_progress: bool = False) -> int:
    """Copy the database with SQLite's online backup API; return the copy's schema version."""
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        src = open_read_connection(db_path)
    except sqlite3.Error as exc:
        raise BackupError(f"cannot open the database {db_path}", detail=str(exc)) from exc
    try:
        with tqdm(desc="database", unit=" pages", file=sys.stderr, disable=not show_progress, leave=False) as bar:
            return copy_database(src, dest, PAGES_PER_STEP, lambda left, total: _show(bar, left, total))
    except sqlite3.Error as exc:
        raise BackupError("cannot copy the database", detail=str(exc)) from exc
    finally:
        src.close()


def _show(bar: tqdm, left: int, total: int) -> None:
    bar.total = total
    bar.n = total - left
    bar.refresh()


def copy_raw(raw_dir: Path, dest: Path) -> int:
    """Copy every journal segment, each cut after its last complete line; return the count."""
    dest.mkdir(parents=True, exist_ok=True, mode=0o700)
    count = 0
    for segment in sorted(raw_dir.glob("*.jsonl")) if raw_dir.exists() else []:
        _copy_whole_lines(segment, dest / segment.name)
        count += 1
    return count


def _copy_whole_lines(src: Path, dst: Path) -> None:
    """The writer may be appending right now: a half-written last record stays behind, so the
    restored daemon's first append starts on a line of its own."""
    with src.open("rb") as fin, dst.open("xb+") as fout:
        left = os.fstat(fin.fileno()).st_size  # appends after this moment belong to the next backup
        while left > 0 and (chunk := fin.read(min(left, 1 << 20))):
            fout.write(chunk)
            left -= len(chunk)
        fout.flush()
        fout.truncate(_last_line_end(fout.fileno(), fout.tell()))
    shutil.copystat(src, dst)


def _last_line_end(fd: int, size: int) -> int:
    """The offset just after the last newline within the first ``size`` bytes of ``fd``."""
    end = size
    while end > 0:
        start = max(0, end - TAIL_CHUNK)
        cut = os.pread(fd, end - start, start).rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        end = start
    return 0


def copy_wiki_files(wiki_dir: Path, dest: Path) -> int:
    """Copy the wiki's work tree (no ``.git`` at any depth: the bundle holds history, and restore
    refuses such members); return the file count."""
    count = 0
    for root, dirs, files in os.walk(wiki_dir):
        here = Path(root)
        dirs[:] = [d for d in dirs if unsafe_part(d) is None]
        for name in files:
            src = here / name
            if name.startswith(TEMP_PREFIX) or src.is_symlink():
                continue  # a page write in flight, or a link that may point outside the data dir
            target = dest / src.relative_to(wiki_dir)
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            try:
                shutil.copy2(src, target)  # page writes are renames: one open sees one version
            except FileNotFoundError:
                continue  # removed since the listing (a delete, a forget sweep)
            count += 1
    return count


def copy_file(src: Path, dest: Path) -> bool:
    """Copy a single file (config, token) with mode 0600; False when it does not exist."""
    if not src.exists():
        return False
    shutil.copyfile(src, dest)
    os.chmod(dest, 0o600)
    return True
