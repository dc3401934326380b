"""Project identity: which project a working directory belongs to, from files alone.

The hook client calls this on every event, so it imports only the standard library, never runs
``git`` and never raises: an unreadable marker, config or ``.git`` file just moves on to the
next rule. Rules, first match wins:

1. ``marker``: the nearest ``.ai-memory.toml`` at or above cwd with ``project = "..."``.
2. ``remote``: inside a git repository with a remote (``origin``, else the first one), the
   remote's path normalized to ``owner-repo`` (``a-b-c`` for nested groups), so one checkout
   at another path or on another machine is the same project. A worktree maps to its main
   repository.
3. ``repo``: the repository root's directory name.
4. ``dir``: cwd's own directory name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ai_memory.core.names import project_name

MARKER = ".ai-memory.toml"
DEFAULT_NAME = "default"
Source = Literal["marker", "remote", "repo", "dir"]

_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?([^/:]{2,}):(.*)$")


@dataclass(frozen=True)
class ProjectIdentity:
    """A project's stable name, the directory it is rooted at, and the rule that named it."""

    name: str
    root: Path
    source: Source


@dataclass(frozen=True)
class _Repo:
    root: Path
    config: Path | None  # the main repository's config file; None when the .git file is broken


def normalize_name(raw: str) -> str:
    """The wiki's name for ``raw`` (``core.names.project_name``), or ``default`` when none is left."""
    return project_name(raw) or DEFAULT_NAME


def remote_name(url: str) -> str | None:
    """``git@github.com:acme/api.git`` and ``https://user@host/acme/api`` → ``acme-api``.

    Local-path remotes (``/srv/git/api.git``, ``file://...``) give the repository name alone,
    since their parent directories say nothing about the project. None when nothing is left.
    """
    url = url.strip()
    if "://" in url:
        scheme, _, rest = url.partition("://")
        path = rest if scheme.lower() == "file" else rest.partition("/")[2]
        local = scheme.lower() == "file"
    elif (match := _SCP_LIKE.match(url)) and not url.startswith(("/", ".", "~")):
        path, local = match.group(2), False
    else:
        path, local = url, True
    segments = [s for s in path.replace("\\", "/").split("/") if s and s not in (".", "..", "~")]
    if not segments:
        return None
    segments[-1] = segments[-1].removesuffix(".git")
    if local:
        segments = segments[-1:]
    return project_name("-".join(segments))


def resolve_project(cwd: str | Path) -> ProjectIdentity:
    """The identity of the project ``cwd`` belongs to (see the module docstring for the rules)."""
    try:
        path = Path(os.path.realpath(os.path.expanduser(str(cwd))))
    except (OSError, ValueError):
        path = Path(str(cwd))
    if _is_file(path):
        path = path.parent
    if not _is_dir(path):
        return ProjectIdentity(normalize_name(path.name), path, "dir")
    first_git: Path | None = None
    for directory in (path, *path.parents):
        name = _marker_project(directory / MARKER)
        if name is not None:
            return ProjectIdentity(name, directory, "marker")
        if first_git is None and _exists(directory / ".git"):
            first_git = directory / ".git"
    if first_git is None:
        return ProjectIdentity(normalize_name(path.name), path, "dir")
    return _from_repo(_locate_repo(first_git))


def _from_repo(repo: _Repo) -> ProjectIdentity:
    remotes = _remotes(repo.config) if repo.config else {}
    url = remotes.get("origin") or next(iter(remotes.values()), None)
    name = remote_name(url) if url else None
    if name:
        return ProjectIdentity(name, repo.root, "remote")
    return ProjectIdentity(normalize_name(repo.root.name.removesuffix(".git")), repo.root, "repo")


def _locate_repo(dot_git: Path) -> _Repo:
    """The main repository behind a ``.git`` directory or a ``.git`` file (worktree, submodule)."""
    worktree = dot_git.parent
    if _is_dir(dot_git):
        return _Repo(worktree, dot_git / "config")
    gitdir = _gitdir_of(dot_git)
    if gitdir is None:
        return _Repo(worktree, None)
    common_text = _read_text(gitdir / "commondir")
    if common_text is None:  # a submodule or --separate-git-dir checkout: its own repository
        return _Repo(worktree, gitdir / "config")
    common = Path(os.path.realpath(gitdir / common_text.strip()))
    if common.name == ".git":
        return _Repo(common.parent, common / "config")
    configured = _config_value(common / "config", "core", "worktree")
    root = Path(os.path.realpath(common / configured)) if configured else common
    return _Repo(root, common / "config")


def _gitdir_of(dot_git_file: Path) -> Path | None:
    text = _read_text(dot_git_file)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:"):].strip()
    gitdir = Path(os.path.realpath(dot_git_file.parent / target))
    return gitdir if _is_dir(gitdir) else None


def _marker_project(path: Path) -> str | None:
    if not _is_file(path):
        return None
    import tomllib  # only when a marker exists: keeps the hook client's start-up lean

    try:
        with open(path, "rb") as fh:
            value = tomllib.load(fh).get("project")
    except (OSError, ValueError):  # TOMLDecodeError and UnicodeDecodeError are ValueErrors
        return None
    if not isinstance(value, str) or not value.strip():
        return None
    return normalize_name(value)


def _remotes(config: Path) -> dict[str, str]:
    """Remote name → url, in file order, from a git config file (first ``url`` of each)."""
    found: dict[str, str] = {}
    for section, sub, key, value in _config_entries(config):
        if section == "remote" and sub is not None and key == "url" and sub not in found:
            found[sub] = value
    return found


def _config_value(config: Path, section: str, key: str) -> str | None:
    for sec, sub, k, value in _config_entries(config):
        if sec == section and sub is None and k == key:
            return value
    return None


def _config_entries(config: Path) -> list[tuple[str, str | None, str, str]]:
    """``(section, subsection, key, value)`` of a git config file; [] when unreadable."""
    text = _read_text(config)
    if text is None:
        return []
    entries: list[tuple[str, str | None, str, str]] = []
    section, sub = "", None
    for raw in text.splitlines():
        line = raw.strip()
        match = _SECTION.match(line)
        if match:
            section, sub = match.group(1).lower(), match.group(2)
            if sub is None and "." in section:  # the legacy [remote.origin] spelling
                section, _, sub = section.partition(".")
            line = line[match.end():].strip()
        if not line or line[0] in "#;":
            continue
        key, sep, value = line.partition("=")
        if sep:
            entries.append((section, sub, key.strip().lower(), _config_string(value)))
    return entries


def _config_string(value: str) -> str:
    value = value.strip()
    if value.startswith('"'):
        end = value.find('"', 1)
        return value[1:end] if end > 0 else value[1:]
    return re.split(r"\s[#;]", value, maxsplit=1)[0].strip()


def _read_text(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(1 << 20)
    except (OSError, ValueError):
        return None


def _is_dir(path: Path) -> bool:
    return os.path.isdir(path)  # never raises, unlike Path.is_dir on EACCES


def _is_file(path: Path) -> bool:
    return os.path.isfile(path)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)
