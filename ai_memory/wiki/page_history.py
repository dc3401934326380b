"""One page's versions from the wiki's git history: its log, its text at a revision, a restore.

Git keeps every version of every page (history is the undo button), so a page's history is
read straight from the first-parent line from HEAD, the wiki as this machine saw it: each
commit whose tree holds different bytes at the path than its first parent's is a revision.
A restore writes the old bytes as a new page version through ``Wiki.write_pages`` (file,
index rows, one commit): history is never rewritten, and the restore is itself a revision.

A revision named by a person is hostile input: it must resolve to a commit on that line (an
abbreviated or full commit id, or ``HEAD``/``HEAD~N``), never to a ref, a tag or a blob.

Every walk is bounded: only the newest ``depth`` commits of the line are read
(``wiki.history_depth``), so a request costs at most that many commits' trees however long the
history has grown (a page's log on a long history was a walk to the first commit each time).
"""

from __future__ import annotations

from collections.abc import Callable

import re
from dataclasses import asdict, dataclass
from pathlib import Path

import pygit2

from ai_memory.core.errors import InputError, NotFound
from ai_memory.wiki.files import is_page_path
from ai_memory.wiki.history import commit_time
from ai_memory.wiki.repo import ensure_repo

_REVISION = re.compile(r"^(?:[0-9a-fA-F]{4,40}|HEAD(?:~\d{1,6})?)$")
MAX_REVISIONS = 1000
HISTORY_DEPTH = 5000  # the default of wiki.history_depth: commits read back from HEAD, at most


@dataclass(frozen=True)
class Revision:
    """A commit that changed the page: ``removed`` when it took the page away."""

    commit: str
    time: str
    author: str
    message: str
    removed: bool

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "short": self.commit[:10]}


@dataclass(frozen=True)
class PageAt:
    """The page's bytes as the commit ``revision`` left them."""

    path: str
    revision: Revision
    data: bytes


def check_page_path(rel: str) -> str:
    """A wiki page path, never one that climbs out or into .git."""
    parts = rel.split("/")
    if (not rel or rel.startswith("/") or "\x00" in rel or "\\" in rel or any(p in ("", ".", "..") for p in parts)
            or not is_page_path(rel)):
        raise InputError("not a wiki page path", detail=f"{rel[:200]!r}: want <project>/<family>/<page>.md")
    return rel


def page_log(wiki_dir: Path, rel: str, limit: int = MAX_REVISIONS, depth: int = HISTORY_DEPTH,
             shown: Callable[[bytes], bool] = lambda data: True) -> list[Revision]:
    """The revisions of ``rel`` among the newest ``depth`` commits, newest first (at most
    ``limit``); only those whose version ``shown`` accepts (for a removal: the version it removed)."""
    repo = ensure_repo(wiki_dir)
    check_page_path(rel)
    found: list[Revision] = []
    for commit in first_parent_line(repo, depth):
        here = _blob_id(commit.tree, rel)
        before = _blob_id(commit.parents[0].tree, rel) if commit.parents else None
        if here != before and (blob := here or before) is not None and shown(repo[blob].peel(pygit2.Blob).data):
            found.append(_revision(commit, removed=here is None))
            if len(found) >= limit:
                break
    return found


def page_at(wiki_dir: Path, rel: str, rev: str, depth: int = HISTORY_DEPTH) -> PageAt:
    """``rel`` as commit ``rev`` left it. NotFound when the page did not exist there."""
    repo = ensure_repo(wiki_dir)
    check_page_path(rel)
    commit = resolve_revision(repo, rev, depth)
    blob = _blob_id(commit.tree, rel)
    if blob is None:
        raise NotFound("the page did not exist at that revision", detail=f"{rel} at {str(commit.id)[:10]}")
    return PageAt(rel, _revision(commit, removed=False), repo[blob].peel(pygit2.Blob).data)


def resolve_revision(repo: pygit2.Repository, rev: str, depth: int = HISTORY_DEPTH) -> pygit2.Commit:
    """The commit ``rev`` names among the newest ``depth`` commits of the wiki's first-parent line."""
    if not _REVISION.match(rev or ""):
        raise InputError("not a revision", detail=f"{rev[:60]!r}: want a commit id from history, HEAD or HEAD~N")
    if repo.head_is_unborn:
        raise NotFound("the wiki has no history yet", detail=rev)
    line = first_parent_line(repo, depth)
    if rev.startswith("HEAD"):
        steps = int(rev[5:] or 0) if "~" in rev else 0
        if steps < len(line):
            return line[steps]
        if len(line) >= depth:  # the line goes on past what is read
            raise NotFound("that revision is older than the history searched",
                           detail=f"{rev}: only the last {depth} commits are read (wiki.history_depth)")
        raise NotFound("no such revision", detail=f"{rev}: the history is shorter")
    matches = [c for c in line if str(c.id).startswith(rev.lower())]
    if not matches:
        searched = f"the last {depth} commits (wiki.history_depth)" if len(line) >= depth else "the whole history"
        raise NotFound("no such revision in the wiki's history", detail=f"{rev}: searched {searched}")
    if len(matches) > 1:
        raise InputError("ambiguous revision", detail=f"{rev} names {len(matches)} commits: give more digits")
    return matches[0]


def first_parent_line(repo: pygit2.Repository, depth: int) -> list[pygit2.Commit]:
    """The newest ``depth`` commits of the first-parent line from HEAD, newest first (reading a
    commit is cheap; comparing its trees is what a walk costs)."""
    line: list[pygit2.Commit] = []
    commit: pygit2.Commit | None = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit)
    while commit is not None and len(line) < depth:
        line.append(commit)
        commit = commit.parents[0] if commit.parents else None
    return line


def _blob_id(tree: pygit2.Tree, rel: str) -> pygit2.Oid | None:
    try:
        entry = tree[rel]
    except KeyError:
        return None
    # a symlink is a blob too (its target's path): never a page version
    return entry.id if entry.type_str == "blob" and entry.filemode != pygit2.GIT_FILEMODE_LINK else None


def _revision(commit: pygit2.Commit, removed: bool) -> Revision:
    message = commit.message.strip().splitlines()[0] if commit.message.strip() else ""
    return Revision(str(commit.id), commit_time(commit), f"{commit.author.name} <{commit.author.email}>",
                    message[:300], removed)


def restore_reason(rel: str, revision: Revision, who: str) -> str:
    return f"restore {rel} to {revision.commit[:10]} ({revision.time[:19]}) by {who}"
