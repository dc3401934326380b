"""The wiki's history as a git bundle, through the ``git`` command.

libgit2 (pygit2) has no bundle support, and a bundle is what we want: one file holding every
ref and object, taken from a consistent set of refs while the daemon keeps committing, which
stock git can verify and clone anywhere. Every call names ``--git-dir`` (and ``--work-tree``)
explicitly, so a ``GIT_DIR`` in the caller's environment cannot point git elsewhere, and runs
with ``gitcli.HARDENED``: a bundle from an archive is checked by fsck as it is fetched, and no
hook runs (not even one a git template dir would install in the new repository).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ai_memory.core.errors import BackupError
from ai_memory.wiki.gitcli import HARDENED

GIT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class WikiHead:
    commit: str
    ref: str  # "refs/heads/main", or "" when HEAD is detached


def _git(*args: str) -> str:
    exe = shutil.which("git")
    if exe is None:
        raise BackupError("the git command is needed for the wiki's history", detail="install git and retry")
    verb = next((a for a in args if not a.startswith("-")), "")
    try:
        done = subprocess.run([exe, *HARDENED, *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BackupError(f"git {verb} failed", detail=str(exc)) from exc
    if done.returncode != 0:
        raise BackupError(f"git {verb} failed", detail=(done.stderr.strip() or done.stdout.strip())[-300:])
    return done.stdout


def create_bundle(wiki_dir: Path, dest: Path) -> WikiHead:
    """Bundle every ref of the wiki (HEAD included) into ``dest``; return what HEAD was."""
    git_dir = f"--git-dir={wiki_dir / '.git'}"
    _git(git_dir, "bundle", "create", "--quiet", "--", str(dest), "--all")
    listed = (line.split(" ", 1) for line in _git("bundle", "list-heads", str(dest)).splitlines() if " " in line)
    heads = {name: sha for sha, name in listed}
    if "HEAD" not in heads:
        raise BackupError("the wiki bundle has no HEAD", detail=str(wiki_dir))
    try:
        ref = _git(git_dir, "symbolic-ref", "--quiet", "HEAD").strip()
    except BackupError:  # detached HEAD: the commit alone says where it was
        ref = ""
    # The bundle's own HEAD line is what restore will see; a ref moved since then does not matter.
    return WikiHead(commit=heads["HEAD"], ref=ref if heads.get(ref) == heads["HEAD"] else "")


def restore_bundle(bundle: Path, wiki_dir: Path, head: WikiHead) -> None:
    """Make ``wiki_dir`` (already holding the archived files) a repository with the bundle's history.

    The work tree is left exactly as archived; the index is set to HEAD, so pages written but
    not yet committed at backup time show as changes, which the daemon commits on its next pass.
    """
    git_dir, work_tree = f"--git-dir={wiki_dir / '.git'}", f"--work-tree={wiki_dir}"
    _git("init", "--quiet", "--template=", "--", str(wiki_dir))  # no template: no sample hooks either
    # --update-head-ok: HEAD of the fresh repository names a branch the fetch is about to create
    _git(git_dir, work_tree, "fetch", "--quiet", "--update-head-ok", "--", str(bundle), "refs/*:refs/*")
    if head.ref:
        _git(git_dir, "symbolic-ref", "--", "HEAD", head.ref)
    else:
        _git(git_dir, "update-ref", "--no-deref", "HEAD", head.commit)  # a hex id (checked in the manifest)
    _git(git_dir, work_tree, "read-tree", "HEAD")
    restored = _git(git_dir, "rev-parse", "HEAD").strip()
    if restored != head.commit:
        raise BackupError("the restored wiki's HEAD differs from the archive's", detail=f"{restored} != {head.commit}")
