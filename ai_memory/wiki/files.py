"""Page files on disk: atomic writes, which paths are pages, and listing them.

Only the wiki layer writes pages. A write goes to a temp file in the same directory (a name the
watcher ignores), is fsynced, renamed over the target, and the directory is fsynced: a crash
leaves either the old file or the new one, never a torn page.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

from ai_memory.core.errors import DiskFull
from ai_memory.store.raw_log import fsync_dir

TEMP_PREFIX = ".ai-memory-tmp-"
IGNORED_DIRS = frozenset({".git", ".obsidian", ".trash", ".stfolder", "node_modules"})
GENERATED = frozenset({"index.md"})
# Editor scratch: vim's .swp/.swx/.swo, backup~ files and its 4913 probe; Obsidian and others' temp names.
_SCRATCH = re.compile(r"(^\.~|^~|~$|\.sw[a-p]$|^4913$|\.tmp$|^\.#|\.crswap$|^\.goutputstream)")


_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


def unsafe_part(rel: str) -> str | None:
    """Why ``rel`` (from outside: a remote's tree, an archive) may not be written under the wiki,
    or None: it must be relative, '/'-separated, without '.', '..', empty or control-character
    parts, and nothing under ``.git`` (nor the spellings other file systems fold to it)."""
    if not rel or rel.startswith("/"):
        return "not a relative path"
    if _CONTROL.search(rel):
        return "control character or backslash"
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            return f"{part or 'empty'!r} segment"
        if part.casefold().rstrip(". ") == ".git" or part.casefold() == "git~1":
            return "inside .git"
    return None


def is_page_path(rel: str) -> bool:
    """True for a markdown page that belongs in the index (relative path, '/' separators)."""
    parts = rel.split("/")
    name = parts[-1]
    if any(p in IGNORED_DIRS or p.startswith(".") for p in parts[:-1]):
        return False
    if name.startswith(TEMP_PREFIX) or name.startswith(".") or _SCRATCH.search(name):
        return False
    if name in GENERATED or (len(parts) == 1 and name == "README.md"):
        return False
    return name.endswith(".md")


def relative(wiki_dir: Path, path: Path) -> str | None:
    try:
        return path.relative_to(wiki_dir).as_posix()
    except ValueError:
        return None


def iter_pages(wiki_dir: Path) -> Iterator[tuple[str, Path]]:
    """Every page file under the wiki, as (relative path, absolute path)."""
    for root, dirs, files in os.walk(wiki_dir):
        dirs[:] = [d for d in dirs if d not in IGNORED_DIRS and not d.startswith(".")]
        for name in files:
            path = Path(root) / name
            rel = path.relative_to(wiki_dir).as_posix()
            if is_page_path(rel):
                yield rel, path


def atomic_write(path: Path, data: bytes) -> os.stat_result:
    """Write ``data`` to ``path`` atomically and durably; return the new file's stat."""
    tmp = path.parent / f"{TEMP_PREFIX}{secrets.token_hex(6)}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            # typed, so callers answer 503 (the client keeps its copy) instead of a bare 500
            raise DiskFull("disk is full; the page was not written", detail=str(exc)) from exc
        raise
    fsync_dir(path.parent)
    return path.stat()


def safe_segment(text: str, fallback: str = "untitled") -> str:
    """A path segment from any text: lower case, [a-z0-9._-], no leading dots."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return cleaned[:80] or fallback
