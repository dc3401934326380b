"""The archive format: a gzipped tar whose first member, ``manifest.json``, names every other
member with its size and SHA-256. Writing one, verifying one, and extracting a verified one.

Only names under ``TOP_LEVEL`` are ever accepted, only regular files, each exactly once and
each listed in the manifest: an archive is never trusted to say where its files go. Nothing
under ``wiki/.git`` is accepted (the repository is rebuilt from the bundle alone: hooks and
config from an archive would run), and no member keeps an executable bit.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path, PurePosixPath
from typing import IO, Any

from tqdm import tqdm

from ai_memory.core.errors import BackupError, CorruptArchive
from ai_memory.store.raw_log import fsync_dir
from ai_memory.wiki.files import unsafe_part

FORMAT = 1
MANIFEST = "manifest.json"
CHUNK = 1 << 20
TOP_LEVEL = frozenset({"db", "raw", "wiki", "wiki.bundle", "config.toml", "token"})
SECRET_MEMBERS = frozenset({"token"})
# tarfile raises these for a truncated or garbled stream (gzip's CRC check raises BadGzipFile, an OSError)
_READ_ERRORS = (tarfile.TarError, OSError, EOFError, ValueError)


@dataclass(frozen=True)
class Manifest:
    """What an archive holds; ``files`` maps each member name to its ``{"sha256", "size"}``."""

    ai_memory_version: str
    schema_version: int
    created_at: str
    wiki_head: str  # the commit HEAD pointed at in the bundle
    wiki_head_ref: str  # e.g. "refs/heads/main"; empty when HEAD was detached
    includes_secrets: bool
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    format: int = FORMAT

    def to_json(self) -> bytes:
        return json.dumps(asdict(self), indent=2, sort_keys=True).encode() + b"\n"

    @classmethod
    def from_json(cls, data: bytes) -> "Manifest":
        known = {f.name for f in fields(cls)}
        try:
            doc = json.loads(data)
            manifest = cls(**{k: v for k, v in doc.items() if k in known})  # newer keys are ignored
        except (ValueError, TypeError) as exc:
            raise CorruptArchive("the archive's manifest is unreadable", detail=str(exc)) from exc
        if manifest.format != FORMAT:
            raise CorruptArchive(f"unknown archive format {manifest.format!r}", detail=f"this ai-memory reads format {FORMAT}")
        _check_head(manifest)
        if not isinstance(manifest.files, dict):
            raise CorruptArchive("the archive's manifest has a bad file list", detail=type(manifest.files).__name__)
        for name, entry in manifest.files.items():
            check_name(name)
            if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
                raise CorruptArchive("the archive's manifest has a bad entry", detail=name)
        return manifest


_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BRANCH_REF = re.compile(r"refs/heads/[A-Za-z0-9_][A-Za-z0-9._/-]{0,200}")


def _check_head(manifest: "Manifest") -> None:
    """The head restore hands to git: a commit id, and a branch ref or nothing (never an option,
    never a ref outside refs/heads/)."""
    head, ref = manifest.wiki_head, manifest.wiki_head_ref
    if not isinstance(head, str) or not _COMMIT.fullmatch(head):
        raise CorruptArchive("the archive's manifest names no commit for the wiki", detail=repr(head)[:100])
    if not isinstance(ref, str) or (ref and (not _BRANCH_REF.fullmatch(ref) or ".." in ref
                                             or ref.endswith((".", "/", ".lock")))):
        raise CorruptArchive("the archive's manifest names a bad branch for the wiki", detail=repr(ref)[:100])


def check_name(name: str) -> PurePosixPath:
    """A member name we accept: relative, no '..', under one of the known top-level names."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0] not in TOP_LEVEL:
        raise CorruptArchive("the archive holds a member outside the data dir layout", detail=name)
    if unsafe_part(name) is not None:  # wiki/.git/hooks/..., wiki/a/.GIT/config: code, not data
        raise CorruptArchive("the archive holds a member ai-memory never writes", detail=f"{name}: {unsafe_part(name)}")
    return path


def file_entry(path: Path) -> dict[str, Any]:
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    return {"sha256": digest, "size": path.stat().st_size}


def write_archive(staging: Path, manifest: Manifest, target: Path, show_progress: bool) -> None:
    """Write the tar.gz next to ``target``, verify it, then rename it into place.

    The partial name never matches the backups' pattern, so a crash mid-write leaves nothing
    that ``latest_backup`` or pruning would take for an archive.
    """
    partial = target.with_name(target.name + ".partial")
    total = sum(int(e["size"]) for e in manifest.files.values())
    try:
        # 0600 from its first byte (the whole memory, perhaps the token): never readable by others,
        # not even between creation and a chmod; "x" never follows nor reuses what is there
        partial.unlink(missing_ok=True)  # a crash's leftover (a link is removed, never followed)
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as raw, \
                tarfile.open(fileobj=raw, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT) as tar, \
                _bar(total, "archive", show_progress) as bar:
            _add_bytes(tar, MANIFEST, manifest.to_json())
            for name in sorted(manifest.files):
                tar.add(staging / name, arcname=name, recursive=False)
                bar.update(int(manifest.files[name]["size"]))
            tar.close()  # the gzip trailer, before the fsync
            raw.flush()
            os.fsync(raw.fileno())
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"cannot write the archive {target}", detail=str(exc)) from exc
    try:
        verify_archive(partial, show_progress)
    except CorruptArchive:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    fsync_dir(target.parent)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
    tar.addfile(info, io.BytesIO(data))


def verify_archive(path: Path, show_progress: bool = False) -> Manifest:
    """Re-read the whole archive and check every member against the manifest; change nothing."""
    manifest: Manifest | None = None
    for manifest, _ in _verified_members(path, show_progress):
        pass
    if manifest is None:
        raise CorruptArchive("the archive is empty", detail=str(path))
    return manifest


def extract_verified(path: Path, dest: Path, show_progress: bool = False) -> Manifest:
    """Extract into ``dest`` (an empty staging dir), checking each member's digest as it is written."""
    manifest: Manifest | None = None
    for manifest, info in _verified_members(path, show_progress, copy_to=dest):
        target = dest / info.name
        # never an executable bit from an archive, and never more than owner-write
        mode = 0o600 if info.name in SECRET_MEMBERS or info.name == "config.toml" else (info.mode & 0o644) or 0o600
        os.chmod(target, mode)
        os.utime(target, (info.mtime, info.mtime))
    if manifest is None:
        raise CorruptArchive("the archive is empty", detail=str(path))
    return manifest


def _verified_members(path: Path, show_progress: bool, copy_to: Path | None = None
                      ) -> Iterator[tuple[Manifest, tarfile.TarInfo]]:
    """Stream the archive once: manifest first, then each member hashed (and copied) and checked."""
    try:
        with tarfile.open(path, "r|gz") as tar:
            members = iter(tar)
            manifest = _read_manifest(tar, next(members, None), path)
            seen: set[str] = set()
            total = sum(int(e["size"]) for e in manifest.files.values())
            with _bar(total, "verify", show_progress) as bar:
                for info in members:
                    _check_member(manifest, info, seen)
                    fh = tar.extractfile(info)
                    assert fh is not None  # a regular file, checked above
                    digest = _digest(fh, bar, None if copy_to is None else copy_to / info.name)
                    if digest != manifest.files[info.name]["sha256"]:
                        raise CorruptArchive("checksum mismatch in the archive", detail=info.name)
                    yield manifest, info
            missing = sorted(set(manifest.files) - seen)
            if missing:
                raise CorruptArchive(f"the archive lacks {len(missing)} listed members", detail=missing[0])
    except _READ_ERRORS as exc:
        raise CorruptArchive(f"cannot read the archive {path}", detail=str(exc) or type(exc).__name__) from exc


def _read_manifest(tar: tarfile.TarFile, first: tarfile.TarInfo | None, path: Path) -> Manifest:
    if first is None or first.name != MANIFEST or not first.isreg():
        raise CorruptArchive("not an ai-memory archive: manifest.json does not come first", detail=str(path))
    fh = tar.extractfile(first)
    assert fh is not None
    return Manifest.from_json(fh.read(16 * CHUNK))


def _check_member(manifest: Manifest, info: tarfile.TarInfo, seen: set[str]) -> None:
    check_name(info.name)
    if not info.isreg():
        raise CorruptArchive("the archive holds something other than a regular file", detail=info.name)
    if info.name not in manifest.files:
        raise CorruptArchive("the archive holds a member its manifest does not list", detail=info.name)
    if info.name in seen:
        raise CorruptArchive("the archive holds a member twice", detail=info.name)
    seen.add(info.name)


def _digest(fh: IO[bytes], bar: tqdm, copy_to: Path | None) -> str:
    """SHA-256 of a member, copying it to ``copy_to`` on the way when given. A failed read is
    the archive's fault (the caller says corrupt); a failed write is not (BackupError)."""
    sha = hashlib.sha256()
    out = _open_copy(copy_to)
    try:
        while chunk := fh.read(CHUNK):
            sha.update(chunk)
            bar.update(len(chunk))
            if out is not None:
                _write(out, chunk, copy_to)
    finally:
        if out is not None:
            out.close()  # unbuffered: nothing left to flush, so closing cannot fail on space
    return sha.hexdigest()


def _open_copy(copy_to: Path | None) -> IO[bytes] | None:
    if copy_to is None:
        return None
    try:
        copy_to.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return open(copy_to, "xb", buffering=0)  # "x": nothing already there is ever overwritten
    except OSError as exc:
        raise BackupError(f"cannot write {copy_to}", detail=str(exc)) from exc


def _write(out: IO[bytes], chunk: bytes, copy_to: Path | None) -> None:
    view = memoryview(chunk)
    try:
        while view:  # a raw file may write less than asked
            view = view[out.write(view) or 0:]
    except OSError as exc:
        raise BackupError(f"cannot write {copy_to}", detail=str(exc)) from exc


def _bar(total: int, desc: str, show: bool) -> tqdm:
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, file=sys.stderr, disable=not show, leave=False)
