"""Which old names of the projects file this machine applies: a sync remote is an outsider too.

The projects file travels with the wiki, so whoever can push to the remote can write into it.
An alias there (``victim → evil``) would send every new event, memory and handoff naming
``victim`` to ``evil``. So an alias is applied only when this machine gave the name up itself
(its own rename or merge, or one it accepted: ``accept``), or when the name holds no page here
(a rename made on another machine moves the files in the same commit, so after the sync nothing
is left under the old name). Any other alias stays in the file, for the machines that gave the
name up, and is held back here: ``status`` and ``lint`` name it, with the merge that accepts it.

The names this machine applies are kept beside git's own state (``.git/ai-memory-aliases.json``),
never in the work tree or a commit: they are this machine's decision. The first time, every
alias the file holds is taken as this machine's (they were applied before this record existed).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ai_memory.core.project_map import ProjectMap
from ai_memory.wiki.files import file_kind, folder_files, fsync_dir, is_page_path

RECORD = "ai-memory-aliases.json"


def trusted(wiki_dir: Path, pmap: ProjectMap) -> tuple[ProjectMap, dict[str, str]]:
    """The map this machine applies, and the aliases it holds back (old name → project)."""
    accepted = _read(wiki_dir)
    if accepted is None:
        _write(wiki_dir, dict(pmap.aliases))
        return pmap, {}
    held: dict[str, str] = {}
    before = dict(accepted)
    for old, new in pmap.aliases.items():
        if accepted.get(old) == new:
            continue
        if _holds_pages(wiki_dir, old):
            held[old] = new
        else:
            accepted[old] = new
    if accepted != before:
        _write(wiki_dir, accepted)
    applied = {old: new for old, new in pmap.aliases.items() if old not in held}
    return ProjectMap(applied, dict(pmap.sessions)), held


def accept(wiki_dir: Path, aliases: dict[str, str]) -> None:
    """This machine gives these names up (its own rename or merge): applied from now on."""
    accepted = _read_or_empty(wiki_dir)
    if any(accepted.get(old) != new for old, new in aliases.items()):
        _write(wiki_dir, {**accepted, **aliases})


def _holds_pages(wiki_dir: Path, name: str) -> bool:
    """Whether the folder ``name`` holds a page here (not a link to one)."""
    if file_kind(wiki_dir, name) != "other":
        return False
    return any(is_page_path(rel) for rel in folder_files(wiki_dir, name)[0])


def _path(wiki_dir: Path) -> Path:
    return wiki_dir / ".git" / RECORD


def _read(wiki_dir: Path) -> dict[str, str] | None:
    try:
        data = json.loads(_path(wiki_dir).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # unreadable: trust no alias it would have vouched for; the user is asked
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _read_or_empty(wiki_dir: Path) -> dict[str, str]:
    return _read(wiki_dir) or {}


def _write(wiki_dir: Path, accepted: dict[str, str]) -> None:
    folder = _path(wiki_dir).parent
    if not folder.is_dir():
        return  # no repository yet: nothing synced either
    fd, tmp = tempfile.mkstemp(prefix=".ai-memory-aliases.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(dict(sorted(accepted.items())), fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, _path(wiki_dir))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(folder)
