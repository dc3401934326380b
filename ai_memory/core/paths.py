"""Path-boundary matching for working directories (pure: callers resolve symlinks first)."""

from __future__ import annotations


def normalize_dir(path: str) -> str:
    """'/repo/' and '/repo' are the same directory; the root stays '/'."""
    stripped = path.rstrip("/")
    return stripped or "/"


def covers(parent: str, child: str) -> bool:
    """True when ``child`` is ``parent`` or inside it, by path boundary: '/repo' covers
    '/repo/api' but never '/repo-other'."""
    p, c = normalize_dir(parent), normalize_dir(child)
    return c == p or c.startswith(p if p == "/" else p + "/")
