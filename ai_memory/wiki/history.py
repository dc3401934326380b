"""Page history from the wiki's git history: what each commit changed, as page versions.

Files are the truth, and git holds every version of them, so the history ``as_of`` searches is
derived from git rather than from what the index happened to see: a reindex restores it, and
``reindex --check`` compares it. The first-parent line from HEAD is the wiki as this machine saw
it (a sync's merge is the moment the other side's changes arrived); each commit's changes
against its first parent are versions valid from that commit's time. Edits made within one
commit window (``wiki.commit_window_s``) are one version.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pygit2

from ai_memory.core.clock import utc_from_timestamp
from ai_memory.core.page import parse_page
from ai_memory.store.history import Version
from ai_memory.wiki.files import is_page_path
from ai_memory.wiki.git import TIME_TRAILER
from ai_memory.wiki.repo import ensure_repo

_TRAILER = re.compile(rf"^{TIME_TRAILER}: (\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{{6}}Z)$", re.M)


def commit_time(commit: pygit2.Commit) -> str:
    """When the commit was made: ai-memory's own commits say it to the microsecond in a trailer
    (git keeps whole seconds), anyone else's give git's time."""
    found = _TRAILER.search(commit.message)
    if found:
        return found.group(1)
    return utc_from_timestamp(commit.commit_time)


def new_commits(wiki_dir: Path, since: str | None) -> tuple[list[pygit2.Commit], str | None, bool]:
    """(commits after ``since`` on the first-parent line, oldest first; HEAD's id; whether the
    history must be read from scratch: nothing read yet, or ``since`` is no longer in it)."""
    repo = ensure_repo(wiki_dir)
    if repo.head_is_unborn:
        return [], None, since is not None
    line: list[pygit2.Commit] = []
    commit: pygit2.Commit | None = repo.head.peel(pygit2.Commit)
    while commit is not None and str(commit.id) != since:
        line.append(commit)
        commit = commit.parents[0] if commit.parents else None
    return line[::-1], str(repo.head.target), since is None or commit is None


def versions(wiki_dir: Path, commits: list[pygit2.Commit]) -> Iterator[Version]:
    """The page versions these commits made, in order (a generated index is no page)."""
    for change in changes(wiki_dir, commits):
        yield version_of(change)


Change = tuple[str, bytes | None, str]  # (path, its bytes at the commit or None when removed, when)


def changes(wiki_dir: Path, commits: list[pygit2.Commit]) -> Iterator[Change]:
    """What these commits did to pages, in order: each page path a commit wrote or removed."""
    repo = ensure_repo(wiki_dir)
    for commit in commits:
        when = commit_time(commit)
        before = commit.parents[0].tree if commit.parents else None
        diff = before.diff_to_tree(commit.tree) if before is not None else commit.tree.diff_to_tree(swap=True)
        for delta in diff.deltas:
            for path, removed in _paths(delta):
                if is_page_path(path):
                    yield path, None if removed else repo[delta.new_file.id].peel(pygit2.Blob).data, when


def version_of(change: Change) -> Version:
    path, data, when = change
    if data is None:
        return Version(path, None, when)
    page = parse_page(path, data, body_links=False)  # history keeps none
    return Version(path, None if page.generated else page, when)


def _paths(delta: pygit2.DiffDelta) -> list[tuple[str, bool]]:
    """(path, removed) for each side a change touches: a rename removes one path, adds another."""
    old, new = delta.old_file.path, delta.new_file.path
    if delta.status == pygit2.GIT_DELTA_DELETED:
        return [(old, True)]
    if old != new:
        return [(old, True), (new, False)]
    return [(new, False)]


def all_versions(wiki_dir: Path) -> list[Version]:
    """Every version the whole first-parent history holds (for a rebuild, or a check)."""
    commits, _, _ = new_commits(wiki_dir, None)
    return list(versions(wiki_dir, commits))
