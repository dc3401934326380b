"""Project identity from real directories, markers and git repositories (no git at resolve time)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ai_memory.client.project import ProjectIdentity, normalize_name, remote_name, resolve_project

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True)


def repo(path: Path, remotes: tuple[tuple[str, str], ...] = (), commit: bool = False) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for name, url in remotes:
        git(path, "remote", "add", name, url)
    if commit:
        git(path, "commit", "-q", "--allow-empty", "-m", "init")
    return path


# Each case builds its world under tmp and returns (cwd, expected name, source, expected root).
Case = Callable[[Path], tuple[Path, str, str, Path]]


def marker_file(tmp: Path) -> tuple[Path, str, str, Path]:
    (tmp / "ws").mkdir()
    (tmp / "ws" / ".ai-memory.toml").write_text('project = "Billing Service"\n')
    return tmp / "ws", "billing-service", "marker", tmp / "ws"


def nested_under_marker(tmp: Path) -> tuple[Path, str, str, Path]:
    repo(tmp / "ws", (("origin", "git@github.com:acme/api.git"),))
    (tmp / "ws" / ".ai-memory.toml").write_text('# ours\nproject = "payments"\n')
    (tmp / "ws" / "src" / "deep").mkdir(parents=True)
    return tmp / "ws" / "src" / "deep", "payments", "marker", tmp / "ws"


def marker_without_project_is_skipped(tmp: Path) -> tuple[Path, str, str, Path]:
    (tmp / "outer" / "inner").mkdir(parents=True)
    (tmp / "outer" / ".ai-memory.toml").write_text('project = "outer"\n')
    (tmp / "outer" / "inner" / ".ai-memory.toml").write_text("other = 1\n")
    return tmp / "outer" / "inner", "outer", "marker", tmp / "outer"


def broken_marker_is_skipped(tmp: Path) -> tuple[Path, str, str, Path]:
    (tmp / "Plain Dir").mkdir()
    (tmp / "Plain Dir" / ".ai-memory.toml").write_text("project = [unclosed\n")
    return tmp / "Plain Dir", "plain-dir", "dir", tmp / "Plain Dir"


def ssh_remote(tmp: Path) -> tuple[Path, str, str, Path]:
    repo(tmp / "checkout", (("origin", "git@github.com:Acme/API.git"),))
    return tmp / "checkout", "acme-api", "remote", tmp / "checkout"


def https_remote_nested_dir(tmp: Path) -> tuple[Path, str, str, Path]:
    repo(tmp / "co", (("origin", "https://user@gitlab.com/acme/api.git"),))
    (tmp / "co" / "pkg" / "mod").mkdir(parents=True)
    return tmp / "co" / "pkg" / "mod", "acme-api", "remote", tmp / "co"


def origin_preferred_over_first(tmp: Path) -> tuple[Path, str, str, Path]:
    repo(tmp / "co", (("upstream", "https://github.com/other/fork"),
                      ("origin", "ssh://git@github.com/acme/api")))
    return tmp / "co", "acme-api", "remote", tmp / "co"


def first_remote_without_origin(tmp: Path) -> tuple[Path, str, str, Path]:
    repo(tmp / "co", (("upstream", "https://gitlab.com/group/sub/tool.git"),
                      ("mirror", "https://github.com/x/y")))
    return tmp / "co", "group-sub-tool", "remote", tmp / "co"


def repo_without_remote(tmp: Path) -> tuple[Path, str, str, Path]:
    repo(tmp / "My_Repo")
    (tmp / "My_Repo" / "docs").mkdir()
    return tmp / "My_Repo" / "docs", "my_repo", "repo", tmp / "My_Repo"


def worktree_maps_to_main_repo(tmp: Path) -> tuple[Path, str, str, Path]:
    main = repo(tmp / "main", (("origin", "https://github.com/acme/api"),), commit=True)
    git(main, "worktree", "add", "-q", "--detach", str(tmp / "elsewhere" / "wt"))
    (tmp / "elsewhere" / "wt" / "sub").mkdir()
    return tmp / "elsewhere" / "wt" / "sub", "acme-api", "remote", main


def worktree_without_remote(tmp: Path) -> tuple[Path, str, str, Path]:
    main = repo(tmp / "mainrepo", commit=True)
    git(main, "worktree", "add", "-q", "--detach", str(tmp / "feature-x"))
    return tmp / "feature-x", "mainrepo", "repo", main


def separate_git_dir(tmp: Path) -> tuple[Path, str, str, Path]:
    (tmp / "gitdirs").mkdir()
    git(tmp, "init", "-q", f"--separate-git-dir={tmp / 'gitdirs' / 'lib'}", str(tmp / "lib"))
    git(tmp / "lib", "remote", "add", "origin", "git@example.org:team/lib.git")
    return tmp / "lib", "team-lib", "remote", tmp / "lib"


def symlink_to_repo(tmp: Path) -> tuple[Path, str, str, Path]:
    repo(tmp / "real" / "proj", (("origin", "https://github.com/acme/web.git"),))
    (tmp / "links").mkdir()
    (tmp / "links" / "shortcut").symlink_to(tmp / "real" / "proj")
    return tmp / "links" / "shortcut", "acme-web", "remote", tmp / "real" / "proj"


def dangling_git_file(tmp: Path) -> tuple[Path, str, str, Path]:
    (tmp / "orphan" / "src").mkdir(parents=True)
    (tmp / "orphan" / ".git").write_text("gitdir: ../nowhere/.git/worktrees/orphan\n")
    return tmp / "orphan" / "src", "orphan", "repo", tmp / "orphan"


def garbage_git_file(tmp: Path) -> tuple[Path, str, str, Path]:
    (tmp / "weird").mkdir()
    (tmp / "weird" / ".git").write_bytes(b"\xff\xfe not a gitdir line")
    return tmp / "weird", "weird", "repo", tmp / "weird"


def plain_directory(tmp: Path) -> tuple[Path, str, str, Path]:
    (tmp / "Notes & Ideas").mkdir()
    return tmp / "Notes & Ideas", "notes-ideas", "dir", tmp / "Notes & Ideas"


def missing_directory(tmp: Path) -> tuple[Path, str, str, Path]:
    return tmp / "gone" / "Old Project", "old-project", "dir", tmp / "gone" / "Old Project"


CASES: list[Case] = [
    marker_file, nested_under_marker, marker_without_project_is_skipped, broken_marker_is_skipped,
    ssh_remote, https_remote_nested_dir, origin_preferred_over_first, first_remote_without_origin,
    repo_without_remote, worktree_maps_to_main_repo, worktree_without_remote, separate_git_dir,
    symlink_to_repo, dangling_git_file, garbage_git_file, plain_directory, missing_directory,
]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_resolve_project(case: Case, tmp_path: Path) -> None:
    tmp = Path(os.path.realpath(tmp_path))
    cwd, name, source, root = case(tmp)
    assert resolve_project(cwd) == ProjectIdentity(name, Path(os.path.realpath(root)), source)  # type: ignore[arg-type]
    assert resolve_project(str(cwd)) == resolve_project(cwd)


def test_same_remote_at_two_paths_is_one_project(tmp_path: Path) -> None:
    a = repo(tmp_path / "laptop" / "api", (("origin", "git@github.com:acme/api.git"),))
    b = repo(tmp_path / "server" / "srv" / "code", (("origin", "https://github.com/acme/api"),))
    assert resolve_project(a).name == resolve_project(b).name == "acme-api"


def test_unreadable_config_falls_back_to_repo_name(tmp_path: Path) -> None:
    checkout = repo(tmp_path / "locked", (("origin", "https://github.com/acme/api"),))
    config = checkout / ".git" / "config"
    config.unlink()
    config.mkdir()  # open() fails with IsADirectoryError, even for root
    assert resolve_project(checkout) == ProjectIdentity("locked", checkout.resolve(), "repo")


def test_unreadable_marker_is_skipped(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    (tmp_path / "ws").mkdir()
    marker = tmp_path / "ws" / ".ai-memory.toml"
    marker.write_text('project = "secret"\n')
    marker.chmod(0)
    try:
        assert resolve_project(tmp_path / "ws").source == "dir"
    finally:
        marker.chmod(0o644)


@pytest.mark.parametrize("url", [
    "git@github.com:acme/api.git", "ssh://git@github.com/acme/api", "https://github.com/acme/api",
    "https://user@gitlab.com/acme/api.git", "ssh://git@github.com:22/acme/api.git/",
    "git://github.com/acme/api.git", "HTTPS://GitHub.com/ACME/Api",
])
def test_remote_forms_normalize_to_owner_repo(url: str) -> None:
    assert remote_name(url) == "acme-api"


@pytest.mark.parametrize("url, expected", [
    ("https://gitlab.com/a/b/c", "a-b-c"),
    ("git@gitlab.com:group/sub group/tool.git", "group-sub-group-tool"),
    ("/srv/git/acme/api.git", "api"),
    ("file:///srv/git/tool.git", "tool"),
    ("../sibling", "sibling"),
    ("https://github.com/", None),
    ("", None),
])
def test_other_remote_forms(url: str, expected: str | None) -> None:
    assert remote_name(url) == expected


@pytest.mark.parametrize("raw, expected", [
    ("Hello World", "hello-world"), ("a__b..c--d", "a__b.c--d"), ("--x--", "x"),
    ("Ünïcode", "n-code"), ("!!!", "default"), ("", "default"), (".hidden.", "hidden"),
])
def test_normalize_name(raw: str, expected: str) -> None:
    assert normalize_name(raw) == expected


def test_a_long_repository_name_gets_the_wikis_name(tmp_path: Path) -> None:
    """One normaliser (core.names.project_name): the hook's project of a 70-character repository
    name is the wiki's (64 characters), so a search by project compares equal."""
    from ai_memory.core.names import project_name

    long = "a" * 60 + "-" + "b" * 9
    identity = resolve_project(repo(tmp_path / long))
    assert identity.name == project_name(long) == long[:64]
    assert remote_name(f"git@github.com:acme/{long}.git") == project_name(f"acme-{long}")
    assert normalize_name("Two..Dots") == project_name("Two..Dots") == "two.dots"


def test_a_later_marker_or_git_init_names_the_directorys_next_events(tmp_path: Path) -> None:
    from ai_memory.ingest.hooks import project_of

    work = tmp_path / "scratch"
    work.mkdir()
    assert project_of(str(work)) == "scratch"
    repo(work, remotes=(("origin", "git@github.com:acme/api.git"),))
    assert project_of(str(work)) == "acme-api"
    (work / ".ai-memory.toml").write_text('project = "Billing"\n')
    assert project_of(str(work)) == "billing"


def test_recent_answers_are_reused_until_they_are_ttl_old(tmp_path: Path) -> None:
    """A hook's cwd is resolved once per ``ttl``: a ``git init`` names the directory's events
    once the cached answer has aged, not before."""
    from ai_memory.ingest.hooks import RecentProjects, project_of

    now = [100.0]
    recent = RecentProjects(ttl=5.0, size=2, clock=lambda: now[0])
    work = tmp_path / "scratch-dir"
    work.mkdir()
    assert recent.name_of(str(work)) == "scratch-dir"
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/api-server.git\n')
    assert project_of(str(work)) == "acme-api-server"
    now[0] += 4.9
    assert recent.name_of(str(work)) == "scratch-dir"
    now[0] += 0.2
    assert recent.name_of(str(work)) == "acme-api-server"
    asked: list[str] = []
    counting = RecentProjects(ttl=5.0, size=2, resolve=lambda cwd: asked.append(cwd) or cwd, clock=lambda: now[0])
    for cwd in ("a", "b", "a", "c", "a", "b"):  # it keeps two directories: the least recent goes
        counting.name_of(cwd)
    assert asked == ["a", "b", "c", "b"]
