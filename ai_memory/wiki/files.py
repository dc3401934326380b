"""Page files on disk: atomic writes, which paths are pages, and listing them.

Only the wiki layer writes pages. A write goes to a temp file in the same directory (a name the
watcher ignores), is fsynced, renamed over the target, and the directory is fsynced: a crash
leaves either the old file or the new one, never a torn page. Every read, write and removal of
a wiki file goes through the functions here, which never follow a symbolic link.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from ai_memory.core.errors import Conflict, DiskFull
from ai_memory.store.raw_log import fsync_dir  # noqa: F401  (re-exported for the wiki)

TEMP_PREFIX = ".ai-memory-tmp-"
IGNORED_DIRS = frozenset({".git", ".obsidian", ".trash", ".stfolder", "node_modules"})
GENERATED = frozenset({"index.md"})  # names ai-memory generates; its files say so (generated: true)
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
    if len(parts) == 1 and name == "README.md":
        return False
    return name.endswith(".md")


def is_watched_dir(rel: str) -> bool:
    """True for a folder whose changes may concern pages: none under .git (every commit makes
    object folders there) or another ignored or hidden folder."""
    return not any(p in IGNORED_DIRS or p.startswith(".") for p in rel.split("/"))


def relative(wiki_dir: Path, path: Path) -> str | None:
    try:
        return path.relative_to(wiki_dir).as_posix()
    except ValueError:
        return None


def iter_pages(wiki_dir: Path, links: list[str] | None = None) -> Iterator[tuple[str, Path]]:
    """Every page file under the wiki, as (relative path, absolute path). Symbolic links (to a
    file or a folder) are never followed nor yielded; their paths go to ``links`` when given."""
    for rel, entry in _page_entries(wiki_dir, links):
        yield rel, Path(entry.path)


def page_stats(wiki_dir: Path, links: list[str] | None = None) -> dict[str, tuple[int, int]]:
    """Every page file's (mtime_ns, size), by relative path, as ``iter_pages`` finds them: what
    a reconcile compares with the index, at one stat per file and no path objects."""
    found = {}
    for rel, entry in _page_entries(wiki_dir, links):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:  # gone since the folder was listed
            continue
        found[rel] = (st.st_mtime_ns, st.st_size)
    return found


def _page_entries(wiki_dir: Path, links: list[str] | None) -> Iterator[tuple[str, os.DirEntry[str]]]:
    stack = [(str(wiki_dir), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.is_symlink():
                if links is not None and not (prefix == "" and entry.name == ".git"):
                    links.append(rel)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in IGNORED_DIRS and not entry.name.startswith("."):
                    stack.append((entry.path, rel + "/"))
            elif entry.is_file(follow_symlinks=False) and is_page_path(rel):
                yield rel, entry


# -- reading and writing without ever following a symlink -------------------------------------
# Each path is opened one segment at a time from the wiki's own folder, every segment with
# O_NOFOLLOW: a symlinked folder or file anywhere on the way is ELOOP (or ENOTDIR), never a read
# of /etc/passwd nor a write into someone's home. No check-then-open race: the descriptors are
# the check.

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def is_link_refusal(exc: OSError) -> bool:
    """True for the errors a symlink on the way gives (ELOOP, or ENOTDIR for a linked folder)."""
    return exc.errno in (errno.ELOOP, errno.ENOTDIR)


def _open_parent(wiki_dir: Path, rel: str, create: bool) -> tuple[int, str]:
    """A descriptor of the folder holding ``rel`` (walked without following links) and its name."""
    *folders, name = rel.split("/")
    fd = os.open(wiki_dir, _ROOT_FLAGS)  # the wiki folder itself may be a link the user made
    try:
        for part in folders:
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd, name


def read_file(wiki_dir: Path, rel: str, limit: int = -1) -> tuple[bytes, os.stat_result]:
    """The bytes of a wiki file (at most ``limit`` of them) and its stat; OSError (ELOOP for a
    link) as open() would raise."""
    parent, name = _open_parent(wiki_dir, rel, create=False)
    try:
        # O_NONBLOCK: a FIFO dropped into the wiki must not hang the reader (it is refused below)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent)
    finally:
        os.close(parent)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", rel)
        return fh.read(limit), st


def lstat_file(wiki_dir: Path, rel: str) -> os.stat_result:
    parent, name = _open_parent(wiki_dir, rel, create=False)
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    finally:
        os.close(parent)


def file_kind(wiki_dir: Path, rel: str) -> str:
    """"file", "missing", "link" (a symlink at ``rel`` or on the way) or "other" (a folder, ...)."""
    try:
        mode = lstat_file(wiki_dir, rel).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return "link" if is_link_refusal(exc) else "other"
    return "file" if stat.S_ISREG(mode) else "link" if stat.S_ISLNK(mode) else "other"


def unlink_file(wiki_dir: Path, rel: str) -> None:
    """Remove a wiki file (a link on the way is an error; a link at the end is removed itself)."""
    parent, name = _open_parent(wiki_dir, rel, create=False)
    try:
        os.unlink(name, dir_fd=parent)
    finally:
        os.close(parent)


def atomic_write(wiki_dir: Path, rel: str, data: bytes, mode: int = 0o644) -> os.stat_result:
    """Write ``data`` to the wiki file ``rel`` atomically and durably; return the new file's stat.
    ``mode``: the permissions of the file it replaces, where a caller keeps them (a 0600 note).

    Folders are created as needed, and none on the way may be a link; a link at ``rel`` itself is
    replaced by the file, so whatever it pointed at is never written."""
    tmp = f"{TEMP_PREFIX}{secrets.token_hex(6)}"
    parent = -1
    try:
        parent, name = _open_parent(wiki_dir, rel, create=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode & 0o777,
                     dir_fd=parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        os.fsync(parent)
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except BaseException as exc:
        if parent >= 0:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            # typed, so callers answer 503 (the client keeps its copy) instead of a bare 500
            raise DiskFull("disk is full; the page was not written", detail=str(exc)) from exc
        if isinstance(exc, OSError) and is_link_refusal(exc):
            raise Conflict("a symlink in the wiki stands where the page goes; nothing was written",
                           detail=f"{rel}: ai-memory never writes through a link (see lint: symlink)") from exc
        raise
    finally:
        if parent >= 0:
            os.close(parent)



def move_file(wiki_dir: Path, old_rel: str, new_rel: str) -> None:
    """Move a wiki file to a new path, never over an existing file (FileExistsError) and never
    through a link: the file is linked at its new name, then unlinked at its old one."""
    src, src_name = _open_parent(wiki_dir, old_rel, create=False)
    try:
        dst, dst_name = _open_parent(wiki_dir, new_rel, create=True)
        try:
            _link_or_copy(src, src_name, dst, dst_name)
            os.unlink(src_name, dir_fd=src)
            os.fsync(dst)
            os.fsync(src)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def same_file(wiki_dir: Path, a: str, b: str) -> bool:
    """Whether two wiki paths are one file (a move's link made, its unlink not: a crash)."""
    try:
        return os.path.samestat(lstat_file(wiki_dir, a), lstat_file(wiki_dir, b))
    except OSError:
        return False


def _link_or_copy(src: int, src_name: str, dst: int, dst_name: str) -> None:
    """The file at its new name too: a hard link, or where the file system has none (exFAT, SMB,
    another device), an exclusive create and a durable copy. Never over an existing file, except
    the very file itself (linked by a move a crash cut short)."""
    try:
        os.link(src_name, dst_name, src_dir_fd=src, dst_dir_fd=dst, follow_symlinks=False)
        return
    except FileExistsError:
        if os.path.samestat(os.stat(src_name, dir_fd=src, follow_symlinks=False),
                            os.stat(dst_name, dir_fd=dst, follow_symlinks=False)):
            return
        raise
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
    fd_in = os.open(src_name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=src)
    try:
        mode = os.fstat(fd_in).st_mode & 0o777
        fd_out = os.open(dst_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                         dir_fd=dst)
        with os.fdopen(fd_out, "wb") as out, os.fdopen(os.dup(fd_in), "rb") as fh:
            shutil.copyfileobj(fh, out)
            out.flush()
            os.fsync(out.fileno())
    finally:
        os.close(fd_in)


def move_folder(wiki_dir: Path, old: str, new: str) -> None:
    """Rename a top-level wiki folder (one rename: the folder is never half moved). Neither may
    be a link, and the new name must be free (FileExistsError)."""
    root = os.open(wiki_dir, _ROOT_FLAGS)
    try:
        if not stat.S_ISDIR(os.stat(old, dir_fd=root, follow_symlinks=False).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder (a link is never moved)", old)
        try:
            os.stat(new, dir_fd=root, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            raise FileExistsError(errno.EEXIST, "already exists", new)
        os.rename(old, new, src_dir_fd=root, dst_dir_fd=root)
        os.fsync(root)
    finally:
        os.close(root)


def folder_files(wiki_dir: Path, folder: str) -> tuple[list[str], list[str]]:
    """Every regular file under a top-level folder (any kind, not only pages, ``.git`` never),
    and the links found there (never followed); relative paths, sorted."""
    files: list[str] = []
    links: list[str] = []
    stack = [folder]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(wiki_dir / rel))
        except OSError:
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}"
            if entry.is_symlink():
                links.append(child)
            elif entry.is_dir(follow_symlinks=False):
                if entry.name != ".git":
                    stack.append(child)
            elif entry.is_file(follow_symlinks=False) and not entry.name.startswith(TEMP_PREFIX):
                files.append(child)
    return sorted(files), sorted(links)


def remove_empty_folders(wiki_dir: Path, folder: str) -> None:
    """Remove ``folder`` and the folders under it that are empty (never through a link)."""
    for path, _, _ in os.walk(wiki_dir / folder, topdown=False, followlinks=False):  # children first
        try:
            os.rmdir(path)
        except OSError:  # not empty: something stays there (a link, a file being written)
            continue
