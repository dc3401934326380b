"""The projects file: which project names now mean another project, and which sessions were
moved to a project other than the one their events named. Pure logic, no I/O.

It is canonical, a file in the wiki (``wiki/.ai-memory/projects.json``) written by the project
lifecycle verbs in the very git commit that moves the pages: a reindex, a database rebuilt at
start and another machine syncing the wiki all read the same answer from it. The index's alias
tables are derived from it. The file is JSON (the standard library reads and writes it); a
person should not need to edit it, and one that does not parse is reported and read as empty.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.errors import InputError
from ai_memory.core.names import UNSORTED, project_name
from ai_memory.core.page import GLOBAL_PROJECT

PROJECTS_FILE = ".ai-memory/projects.json"
_HEADER = "ai-memory's record of project renames, merges and moved sessions; change it with ai-memory project"
MAX_ENTRIES = 100_000  # a hostile file cannot make reading it unbounded
MAX_BYTES = 1 << 20  # a larger projects file is refused unread
MAX_PROBLEMS = 20  # what status lists of a bad file; the rest is counted
RESERVED = frozenset({GLOBAL_PROJECT, UNSORTED})  # never an old name, never a target
# names Windows will not create as a folder (a synced wiki must open there too)
_DEVICES = frozenset({"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10))})


@dataclass(frozen=True)
class ProjectMap:
    """``aliases``: old name → the project it now means (always a name that is no alias);
    ``sessions``: session id → the project it was moved to."""

    aliases: dict[str, str] = field(default_factory=dict)
    sessions: dict[str, str] = field(default_factory=dict)

    def project_of(self, name: str | None, session_id: str | None = None) -> str | None:
        """The project an event (or a client) naming ``name`` belongs to now."""
        if session_id is not None and session_id in self.sessions:
            return self.sessions[session_id]
        return self.aliases.get(name, name) if name is not None else None

    def renamed(self, old: str, new: str) -> "ProjectMap":
        """``old`` becomes an alias of ``new``: names that meant ``old`` mean ``new`` too, and
        ``new`` is a project of its own again if it was an alias."""
        aliases = {a: (new if p == old else p) for a, p in self.aliases.items() if a != new}
        aliases[old] = new
        sessions = {s: (new if p == old else p) for s, p in self.sessions.items()}
        return ProjectMap(aliases, sessions)

    def session_moved(self, session_id: str, project: str) -> "ProjectMap":
        return ProjectMap(dict(self.aliases), {**self.sessions, session_id: project})

    def joined(self, theirs: "ProjectMap") -> "ProjectMap":
        """Both machines' renames, merges and moves (a sync where both changed the file): ours
        wins a name both give; chains are followed to their end, a cycle is dropped."""
        given = {**theirs.aliases, **self.aliases}

        def final(name: str) -> str | None:
            seen = {name}
            while name in given:
                name = given[name]
                if name in seen:
                    return None
                seen.add(name)
            return name

        aliases = {a: p for a in given if (p := final(a)) is not None and p != a}
        sessions = {s: aliases.get(p, p) for s, p in {**theirs.sessions, **self.sessions}.items()}
        return ProjectMap(aliases, sessions)


def render(pmap: ProjectMap) -> bytes:
    body = {"about": _HEADER, "aliases": dict(sorted(pmap.aliases.items())),
            "sessions": dict(sorted(pmap.sessions.items()))}
    return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def parse(raw: bytes | None) -> tuple[ProjectMap, list[str]]:
    """The map a file holds and its problems; never raises (a bad file reads as empty)."""
    if raw is None:
        return ProjectMap(), []
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return ProjectMap(), [f"{PROJECTS_FILE}: not JSON ({exc})"]
    if not isinstance(data, dict):
        return ProjectMap(), [f"{PROJECTS_FILE}: not an object"]
    problems: list[str] = []
    aliases = _names(data.get("aliases"), "aliases", problems, key_is_project=True)
    sessions = _names(data.get("sessions"), "sessions", problems, key_is_project=False)
    if len(problems) > MAX_PROBLEMS:
        problems[MAX_PROBLEMS:] = [f"{PROJECTS_FILE}: and {len(problems) - MAX_PROBLEMS} more names skipped"]
    # a chain or a cycle someone wrote by hand: only names that are no alias are targets
    aliases = {a: p for a, p in aliases.items() if p not in aliases and a != p}
    sessions = {s: aliases.get(p, p) for s, p in sessions.items()}
    return ProjectMap(aliases, sessions), problems


def _names(value: Any, key: str, problems: list[str], *, key_is_project: bool) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_ENTRIES:
        problems.append(f"{PROJECTS_FILE}: {key} is not an object of at most {MAX_ENTRIES} names")
        return {}
    found = {}
    for k, v in value.items():
        good_key = _usable(k) if key_is_project else storable_session_id(k)
        if good_key and isinstance(v, str) and _usable(v):
            found[k] = v
        else:
            problems.append(f"{PROJECTS_FILE}: {key}: {str(k)[:60]!r} skipped (not a project name)")
    return found


def _usable(name: object) -> bool:
    return isinstance(name, str) and project_name(name) == name and name not in RESERVED


def storable_session_id(session_id: str) -> bool:
    """Whether the projects file can hold this session id (one that it could not would lose the
    move at the next reindex)."""
    return 0 < len(session_id) <= 256 and session_id.isprintable()


def checked_name(raw: object, what: str = "project", refused: frozenset[str] = frozenset()) -> str:
    """A project name from a person or a client, normalised as the wiki names projects
    ("Acme API" → "acme-api"); InputError when nothing of it is a name, it is ``_global``, a
    folder name Windows refuses (``con``, ``nul``, ...) or one of ``refused`` (folders the wiki
    does not read)."""
    name = project_name(raw) if isinstance(raw, str) else None
    if name is None:
        raise InputError(f"bad {what} name", detail=f"{str(raw)[:60]!r}: letters, digits, '.', '_' and '-'")
    if name == GLOBAL_PROJECT:
        raise InputError(f"{GLOBAL_PROJECT} is not a project that can be renamed, merged or purged")
    if name in refused or name.split(".", 1)[0].lower() in _DEVICES:
        raise InputError(f"bad {what} name", detail=f"{name}: a folder the wiki does not read, or Windows refuses")
    return name
