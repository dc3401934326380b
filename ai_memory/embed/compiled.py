"""The encoder in OpenVINO's own format, made once per cache folder from the checked ONNX graph.

``embed.onnx_graph`` builds the graph from the pinned safetensors (its bytes checked against
``GRAPH_SHA256``); OpenVINO's public ``save_model`` writes it with its weight matrices stored in
float16, which OpenVINO keeps compressed in memory (a bfloat16 or float32 pass reads them as
they are): half the model's resident memory, vectors within a cosine of 0.9999 of float32's.
Its compiled form for this CPU is then kept by OpenVINO itself (``CACHE_DIR``), so a later start
loads in a fraction of a second, with neither onnx nor the graph builder imported.

The folder is made in a temporary folder, with the digests of its files written last, and
renamed into place, all under a lock on the cache folder (two daemons, or a daemon and a test,
may start at once). A folder whose files no longer have their digests (cut short, damaged), that
is a symbolic link or holds one, or that is not the user's own, is never used: it is removed (a
link as a link) and made again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ai_memory.embed.encoding import GRAPH_SHA256
from ai_memory.embed.model import ModelError, sha256_of

GRAPH_NAME = f"all-MiniLM-L6-v2-{GRAPH_SHA256[:16]}"  # a new graph is a new folder, never a stale one reused
MODEL_FILES = ("model.xml", "model.bin")
DIGESTS = "digests.json"
COMPILED = "compiled"  # OpenVINO's own cache of the model compiled for this CPU


def model_folder(model_dir: Path, cache_dir: Path) -> Path:
    """``cache_dir/<graph>/``, holding ``model.xml`` and ``model.bin`` as their digests say;
    made when absent or when it cannot be trusted."""
    folder = cache_dir / GRAPH_NAME
    cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _locked(cache_dir):
        if _whole(folder):
            return folder
        _clear_leftovers(cache_dir, folder)
        staging = Path(tempfile.mkdtemp(prefix=f".{GRAPH_NAME}.", dir=cache_dir))
        try:
            _write(model_dir, staging)
            staging.rename(folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return folder


@contextmanager
def _locked(cache_dir: Path) -> Iterator[None]:
    fd = os.open(cache_dir / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _own_entry(path: Path, kind: int) -> bool:
    """``path`` is a ``kind`` (directory or regular file) itself, not a link, owned by this user
    and writable by no one else."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_IFMT(st.st_mode) == kind and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _whole(folder: Path) -> bool:
    if not _own_entry(folder, stat.S_IFDIR) or not _own_entry(folder / DIGESTS, stat.S_IFREG):
        return False
    compiled = folder / COMPILED
    if compiled.exists() or compiled.is_symlink():
        if not _own_entry(compiled, stat.S_IFDIR) or any(not _own_entry(p, stat.S_IFREG) for p in compiled.iterdir()):
            return False
    try:
        recorded = json.loads((folder / DIGESTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(recorded, dict) and all(
        _own_entry(folder / name, stat.S_IFREG) and recorded.get(name) == sha256_of(folder / name)
        for name in MODEL_FILES)


def _clear_leftovers(cache_dir: Path, folder: Path) -> None:
    """The untrusted folder, and staging folders a crash left behind (only ever ours: the lock
    is held). A link is removed as a link: nothing outside the cache folder is touched."""
    for entry in [folder, *cache_dir.glob(f".{GRAPH_NAME}.*")]:
        if entry.is_symlink() or entry.is_file():
            entry.unlink()
        elif entry.is_dir():
            shutil.rmtree(entry)


def _write(model_dir: Path, into: Path) -> None:
    try:
        import openvino

        from ai_memory.embed.onnx_graph import model_bytes
    except ImportError as exc:
        raise ModelError("the embedding runtime is not installed", detail=str(exc)) from exc
    graph = model_bytes(model_dir)
    if hashlib.sha256(graph).hexdigest() != GRAPH_SHA256:
        raise ModelError("the encoder graph built from the pinned weights differs from its pinned digest",
                         detail="another onnx release serializes it otherwise")
    openvino.save_model(openvino.Core().read_model(graph), str(into / MODEL_FILES[0]), compress_to_fp16=True)
    digests = {name: sha256_of(into / name) for name in MODEL_FILES}
    for name in MODEL_FILES:
        os.chmod(into / name, 0o600)
    (into / DIGESTS).write_text(json.dumps(digests, indent=1), encoding="utf-8")
    os.chmod(into / DIGESTS, 0o600)
