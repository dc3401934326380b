"""The wiki's git repository (pygit2): creation with an initial commit, and commits of pages."""

from __future__ import annotations

from pathlib import Path

import pygit2

AUTHOR_NAME = "ai-memory"
AUTHOR_EMAIL = "ai-memory@localhost"

_README = """# ai-memory wiki

Markdown pages with YAML frontmatter, written by ai-memory and by you (Obsidian, vim, ...).
These files are the truth: the search index is rebuilt from them with `ai-memory reindex`.
Git history is the undo button.
"""


def signature() -> pygit2.Signature:
    return pygit2.Signature(AUTHOR_NAME, AUTHOR_EMAIL)


def ensure_repo(wiki_dir: Path) -> pygit2.Repository:
    """Open the wiki repository, creating it with an initial commit when missing."""
    if (wiki_dir / ".git").exists():
        return pygit2.Repository(str(wiki_dir))
    wiki_dir.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(wiki_dir), initial_head="main")
    (wiki_dir / "README.md").write_text(_README)
    (wiki_dir / ".gitignore").write_text(".obsidian/workspace*\n.ai-memory-tmp-*\n*.swp\n*~\n")
    for name in ("README.md", ".gitignore"):  # not add_all: it would take symlinks along (see git.commit_all)
        repo.index.add(name)
    repo.index.write()
    tree = repo.index.write_tree()
    sig = signature()
    repo.create_commit("HEAD", sig, sig, "ai-memory: initialize wiki", tree, [])
    return repo
