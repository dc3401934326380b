"""Keeping a project's local settings out of git: lines in the repository's ``info/exclude``.

``.claude/settings.local.json`` is local by Claude Code's convention (approvals, a developer's
own settings), but nothing ignores it in a repository Claude Code did not set up; an install
that writes it adds it to ``.git/info/exclude`` (never to a committed ``.gitignore``; its
backups go to the data dir, never beside it). A worktree's ``.git`` file points at its git dir,
whose ``commondir`` holds the shared ``info/exclude``. Outside a repository there is nothing to
do.
"""

from __future__ import annotations

from pathlib import Path

from ai_memory.core.errors import StorageError


def _git_dir(start: Path) -> tuple[Path, Path] | None:
    """(work tree root, the git dir holding ``info/``) for ``start``, or None outside a repository."""
    for root in (start, *start.parents):
        dot_git = root / ".git"
        if dot_git.is_dir():
            return root, dot_git
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            git_dir = (root / text.removeprefix("gitdir:").strip()).resolve()
            common = git_dir / "commondir"
            if common.is_file():
                git_dir = (git_dir / common.read_text(encoding="utf-8").strip()).resolve()
            return root, git_dir
    return None


def exclude_locally(path: Path) -> Path | None:
    """Make git ignore ``path``; the exclude file, or None outside a repository."""
    found = _git_dir(path.parent.resolve())
    if found is None:
        return None
    root, git_dir = found
    rel = path.parent.resolve().relative_to(root) / path.name
    wanted = [f"/{rel.as_posix()}"]
    exclude = git_dir / "info" / "exclude"
    try:
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        missing = [line for line in wanted if line not in text.splitlines()]
        if missing:
            exclude.parent.mkdir(parents=True, exist_ok=True)
            lead = "" if not text or text.endswith("\n") else "\n"
            with exclude.open("a", encoding="utf-8") as fh:
                fh.write(lead + "# ai-memory: local settings\n" + "\n".join(missing) + "\n")
    except OSError as exc:
        raise StorageError(f"cannot update {exclude}", detail=str(exc)) from exc
    return exclude
