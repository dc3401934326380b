"""The data dir on disk: first-start layout from data_template/, the token, the serve lock, the
endpoint record.

Everything ai-memory keeps lives under one directory (default ``~/.local/share/ai-memory``):
``config.toml``, ``token``, ``wiki/`` (git), ``db/``, ``raw/``, ``spool/``, ``logs/``, ``models/``.
"""

from __future__ import annotations

import fcntl
import os
import secrets
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO

from ai_memory.core.clock import now_iso
from ai_memory.core.endpoint import ENDPOINT_FILE, Endpoint, parse_endpoint, render_endpoint
from ai_memory.core.errors import ConfigError, DataDirLocked, StorageError

SUBDIRS = ("wiki", "db", "raw", "spool", "spool/bad", "logs", "models")
# Package data: the top-level data_template/ is installed as ai_memory.data_template (a link to it),
# so a wheel carries it; read through importlib.resources, never through a checkout path.
TEMPLATE_DIR: Traversable = resources.files("ai_memory.data_template")
# Present once an agent was set up to reach the MCP tools over HTTP, or the daemon served them:
# the daemon then loads them at start-up instead of at the first call.
MCP_HTTP_USED = "mcp-http.used"

# Below this much free space on the data dir's disk, writes fail (the doctor warns), and nothing
# that could go elsewhere (a vector codes file) takes more of it.
DISK_FREE_MIN_BYTES = 512 * 2**20


def prepare(data_dir: Path) -> None:
    """Create whatever is missing of the layout; never touch what already exists."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(data_dir, 0o700)
        for name in SUBDIRS:
            path = data_dir / name
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(path, 0o700)
        config = data_dir / "config.toml"
        if not config.exists():
            _write_new(config, (TEMPLATE_DIR / "config.toml").read_bytes(), 0o600)
        ensure_token(data_dir / "token")
    except OSError as exc:
        raise ConfigError(f"cannot lay out the data dir {data_dir}", detail=str(exc)) from exc


def _write_new(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def ensure_token(path: Path) -> str:
    """Return the API token, creating a random one with mode 0600 on first use."""
    if path.exists():
        return read_token(path)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    return token


def read_token(path: Path) -> str:
    return path.read_text().strip()


class ServeLock:
    """An exclusive lock on ``<data_dir>/serve.lock`` holding the pid of the daemon."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "serve.lock"
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        fh = open(self.path, "a+")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            pid = fh.read().strip() or "unknown"
            fh.close()
            raise DataDirLocked(
                f"another ai-memory daemon (pid {pid}) is serving this data dir",
                detail=str(self.path.parent),
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def locked_pid(data_dir: Path) -> int | None:
    """The pid of the daemon holding the data dir, or None when none does."""
    path = data_dir / "serve.lock"
    if not path.exists():
        return None
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            text = fh.read().strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    return None


def write_endpoint(data_dir: Path, url: str) -> Endpoint:
    """Record that this process serves ``data_dir`` at ``url``: temp file, fsync, rename, so a
    reader sees the old record or the new one, never half of one."""
    record = Endpoint(url=url, pid=os.getpid(), started_at=now_iso())
    path = data_dir / ENDPOINT_FILE
    tmp = path.with_name(f".{ENDPOINT_FILE}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(render_endpoint(record))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StorageError(f"cannot write {path}", detail=str(exc)) from exc
    return record


def remove_endpoint(data_dir: Path) -> None:
    """Remove the endpoint record if this process wrote it (a successor's record stays)."""
    path = data_dir / ENDPOINT_FILE
    try:
        record = parse_endpoint(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return
    if record is not None and record.pid == os.getpid():
        path.unlink(missing_ok=True)
