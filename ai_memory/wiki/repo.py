"""The wiki's git repository (pygit2): creation with an initial commit, and commits of pages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

from ai_memory.wiki.files import file_kind

AUTHOR_NAME = "ai-memory"
AUTHOR_EMAIL = "ai-memory@localhost"

_README = """# ai-memory wiki

Markdown pages with YAML frontmatter, written by ai-memory and by you (Obsidian, vim, ...).
These files are the truth: the search index is rebuilt from them with `ai-memory reindex`.
Git history is the undo button.
"""


_GITIGNORE = ".obsidian/workspace*\n.ai-memory-tmp-*\n*.swp\n*~\n"


def signature() -> pygit2.Signature:
    return pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL)


@contextmanager
def opened_repo(wiki_dir: Path) -> Iterator[pygit2.Repository]:
    """``ensure_repo``'s repository, its handles and caches (the index a status reads) let go
    when the block ends. A Repository is freed only by the cyclic garbage collector (its branch
    and reference collections point back at it), which may run long after; at 100,000 pages each
    one left behind holds ~17 MB, and the daemon commits every few seconds while it works."""
    repo = ensure_repo(wiki_dir)
    try:
        yield repo
    finally:
        repo.free()


def ensure_repo(wiki_dir: Path) -> pygit2.Repository:
    """Open the wiki repository, creating it with an initial commit when missing."""
    if (wiki_dir / ".git").exists():
        return pygit2.Repository(str(wiki_dir))
    wiki_dir.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(wiki_dir), initial_head="main")
    # A folder of notes made a wiki keeps its files: ours are written only where none exists.
    for name, text in (("README.md", _README), (".gitignore", _GITIGNORE)):
        if not (wiki_dir / name).exists() and not (wiki_dir / name).is_symlink():
            (wiki_dir / name).write_text(text)
    for path, flags in repo.status().items():  # not add_all: it would take symlinks along (see git.commit_all)
        if flags != pygit2.GIT_STATUS_IGNORED and file_kind(wiki_dir, path) == "file":
            repo.index.add(path)
    repo.index.write()
    tree = repo.index.write_tree()
    sig = signature()
    repo.create_commit("HEAD", sig, sig, "ai-memory: initialize wiki", tree, [])
    return repo
