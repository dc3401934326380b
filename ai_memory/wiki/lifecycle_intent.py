"""A lifecycle verb's intent: what it is about to change, recorded durably before the first change.

A rename, a merge, a purge or a session's move changes many files, one at a time, then commits
once and moves rows. A crash in the middle left a project split between two names with nothing
to tell. So before the first file changes, the whole plan is written to
``.git/ai-memory-lifecycle.json`` (beside git's own records of an operation in progress, never in
the work tree or a commit), fsynced, and removed only once the files are committed and the rows
moved. At the next start, before anything else runs and before anything is committed, an intent
still there is finished (``wiki.projects.ProjectLifecycle.finish_interrupted``): every step of a
verb can be done again, so finishing is running it again from the top.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ai_memory.core.project_map import ProjectMap, parse, render
from ai_memory.wiki.files import fsync_dir

INTENT_FILE = "ai-memory-lifecycle.json"
MAX_BYTES = 64 << 20  # a plan of a project with hundreds of thousands of pages


@dataclass
class MovePlan:
    """What a rename, a merge or a session's move changes in the wiki (a dry run's answer too)."""

    verb: str
    src: str
    dst: str
    pmap: ProjectMap  # the projects file afterwards
    whole_folder: bool = False  # a rename: the folder itself is renamed
    moves: dict[str, str] = field(default_factory=dict)  # every file moved: old path → new path
    renamed: dict[str, str] = field(default_factory=dict)  # moved under another name (a clash)
    rewrite: list[str] = field(default_factory=list)  # pages (their paths afterwards) given project: dst
    stuck: list[str] = field(default_factory=list)  # pages naming src whose project line cannot be rewritten
    left: list[str] = field(default_factory=list)  # links found on the way, never moved
    drop: list[str] = field(default_factory=list)  # the merged folder's generated index.md
    git_commit: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"verb": self.verb, "from": self.src, "to": self.dst,
                "moved": [{"from": a, "to": b} for a, b in self.moves.items()],
                "renamed": [{"from": a, "to": b} for a, b in self.renamed.items()],
                "frontmatter_rewritten": self.rewrite,
                "frontmatter_not_rewritten": self.stuck, "links_left": self.left, "removed": self.drop,
                "git_commit": self.git_commit}


@dataclass
class PurgePlan:
    """The pages a purge removes (each exactly as commit ``base`` holds it, so history keeps it)."""

    project: str
    paths: list[str]
    base: str | None  # HEAD when the purge began: where the removed pages' bytes are read back


@dataclass
class Intent:
    message: str  # the commit message, which also names the verb in logs
    move: MovePlan | None = None
    purge: PurgePlan | None = None


def _path(wiki_dir: Path) -> Path:
    return wiki_dir / ".git" / INTENT_FILE


def record(wiki_dir: Path, intent: Intent) -> None:
    """Write the intent durably (a temp file fsynced, renamed over the last one, the folder
    fsynced): once this returns, a crash at any later step is finished at the next start."""
    data = json.dumps(_encode(intent), ensure_ascii=False).encode("utf-8")
    folder = _path(wiki_dir).parent
    fd, tmp = tempfile.mkstemp(prefix=".ai-memory-lifecycle.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, _path(wiki_dir))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(folder)


def clear(wiki_dir: Path) -> None:
    """The verb is whole (files committed, rows moved): nothing left to finish."""
    try:
        _path(wiki_dir).unlink()
    except FileNotFoundError:
        return
    fsync_dir(_path(wiki_dir).parent)


def pending(wiki_dir: Path) -> Intent | None:
    """The intent a verb left unfinished; ValueError for a file that cannot be read as one."""
    path = _path(wiki_dir)
    try:
        if path.is_symlink() or path.stat().st_size > MAX_BYTES:
            raise ValueError(f"{path} is not a plan ai-memory wrote")
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return _decode(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} cannot be read: {exc}") from exc


def _encode(intent: Intent) -> dict[str, Any]:
    out: dict[str, Any] = {"message": intent.message}
    if intent.move is not None:
        move = asdict(intent.move)
        move["pmap"] = render(intent.move.pmap).decode("utf-8")
        out["move"] = move
    if intent.purge is not None:
        out["purge"] = asdict(intent.purge)
    return out


def _decode(data: dict[str, Any]) -> Intent:
    move = data.get("move")
    purge = data.get("purge")
    intent = Intent(message=str(data["message"]))
    if move is not None:
        fields = {k: v for k, v in move.items() if k != "pmap"}
        intent.move = MovePlan(**fields, pmap=parse(move["pmap"].encode("utf-8"))[0])
        _check_strings(intent.move.src, intent.move.dst, *intent.move.moves, *intent.move.moves.values(),
                       *intent.move.rewrite, *intent.move.drop)
    if purge is not None:
        intent.purge = PurgePlan(**purge)
        _check_strings(intent.purge.project, *intent.purge.paths)
    if (intent.move is None) == (intent.purge is None):
        raise TypeError("an intent is a move or a purge")
    return intent


def _check_strings(*values: object) -> None:
    if not all(isinstance(v, str) for v in values):
        raise TypeError("a path or a name that is not text")
