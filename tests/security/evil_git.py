"""Crafting hostile git objects with the stock git CLI: trees whose entry names or modes no
honest git would write (``--literally`` skips git's own checks), in a bare remote."""

from __future__ import annotations

import subprocess
from pathlib import Path

BLOB, EXEC, TREE, LINK, GITLINK = "100644", "100755", "40000", "120000", "160000"


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(["git", f"--git-dir={repo}", *args], input=data, capture_output=True, check=True)
    return done.stdout.decode().strip()


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "--quiet", "--bare", "--initial-branch=main", str(path)], check=True)
    return path


def blob(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", data=data)


def tree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object of (mode, name, sha) exactly as given: names may hold '/' or be '..'."""
    raw = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha) for mode, name, sha in entries)
    return git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", data=raw)


def commit(repo: Path, tree_sha: str, message: str = "evil", parent: str | None = None) -> str:
    env_args = ["-c", "user.name=evil", "-c", "user.email=evil@example.com"]
    parents = ["-p", parent] if parent else []
    done = subprocess.run(["git", *env_args, f"--git-dir={repo}", "commit-tree", tree_sha, *parents, "-m", message],
                          capture_output=True, check=True)
    return done.stdout.decode().strip()


def publish(repo: Path, entries: list[tuple[str, str, str]], branch: str = "main") -> str:
    """A commit of a tree with these top-level entries, at the tip of ``branch``."""
    readme = blob(repo, b"# shared wiki\n")
    sha = commit(repo, tree(repo, [(BLOB, "README.md", readme), *entries]))
    git(repo, "update-ref", f"refs/heads/{branch}", sha)
    return sha
