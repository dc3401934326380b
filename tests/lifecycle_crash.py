"""What the crash tests of the project lifecycle verbs share (``test_lifecycle_crash_*``): a
template data dir, a verb run on a copy and killed at a point (by step or by time), the daemon
started again, and the checks of what users see afterwards."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
from conftest import Daemon
from fault_points import Steps, kill_after
from wiki_helpers import git, wait_until

from ai_memory.core.names import project_name

PAGES = 30  # per project: enough steps to land kills between them, few enough for many trials
_PROJECT_LINE = re.compile(r"^project: *(.+?) *$", re.M)
STEP_POINTS = 12
TIME_POINTS = 8
# commits a moment after a write, not half a second: the restarted daemon settles sooner
QUICK = {"AI_MEMORY_WIKI_COMMIT_WINDOW_S": "0.05"}


def fact(project: str, i: int) -> str:
    return (f"---\nid: {project}-fact-{i:03d}\ntype: Fact\nkind: fact\ntitle: {project} fact {i}\n"
            f"project: {project}\ncreated: '2026-11-01T10:00:00Z'\nupdated: '2026-11-01T10:00:00Z'\n---\n\n"
            f"The {project} service keeps quartz{project} record {i} for audits.\n")


def hook(daemon: Daemon, event: str, session: str, project: str, **extra: Any) -> None:
    status, body = daemon.post_hook({"session_id": session, "hook_event_name": event,
                                     "cwd": f"/home/dev/{project}", **extra})
    assert status == 202, body


def settled(daemon: Daemon) -> None:
    wiki = daemon.data_dir / "wiki"
    wait_until(lambda: git(wiki, "status", "--porcelain").strip() == "", timeout=30)


def build_template(data: Path) -> Path:
    """Projects rp (to rename), mm (to merge into dst), pp (to purge) and ms (a session to move),
    each with pages and a compiled session; everything indexed and committed, the daemon stopped."""
    for project in ("rp", "mm", "dst", "pp", "ms"):
        folder = data / "wiki" / project / "facts"
        folder.mkdir(parents=True)
        for i in range(PAGES if project != "dst" else 3):
            (folder / f"fact-{i:03d}.md").write_text(fact(project, i))
    daemon = Daemon(data).start()
    try:
        for project in ("rp", "mm", "pp", "ms"):
            hook(daemon, "UserPromptSubmit", f"{project}-sess", project, prompt=f"Tidy the {project} exporter")
            hook(daemon, "SessionEnd", f"{project}-sess", project)
        wait_until(lambda: _count(data, "SELECT COUNT(*) FROM sessions WHERE page_path IS NOT NULL") == 4, timeout=30)
        wait_until(lambda: _count(data, "SELECT COUNT(*) FROM pages") >= 4 * PAGES + 3 + 4, timeout=30)
        settled(daemon)
    finally:
        daemon.stop()
    return data


def _count(data: Path, sql: str) -> int:
    with sqlite3.connect(data / "db" / "memory.sqlite") as conn:
        return int(conn.execute(sql).fetchone()[0])


@dataclass(frozen=True)
class Verb:
    name: str
    path: str
    body: dict[str, Any]
    check: Callable[[Daemon, Path], str]  # what users see, checked after the restart; the outcome


@dataclass(frozen=True)
class Point:
    step: int | None = None
    seconds: float | None = None

    def __str__(self) -> str:
        return f"step {self.step}" if self.step is not None else f"{self.seconds:.3f} s"


@dataclass
class Run:
    daemon: Daemon  # started again after the kill
    steps: int  # the verb's changes to the wiki before the kill
    seconds: float  # from the request to its answer, or to the kill


def run_verb(template: Path, where: Path, verb: Verb, point: Point | None) -> Run:
    """A copy of the template, a daemon on it, the verb asked for and the daemon killed at
    ``point`` (or after the verb, when the point lies past its end); then the daemon started
    again."""
    data = where / "data"
    shutil.copytree(template, data, symlinks=True)
    daemon = Daemon(data, env=QUICK).start()
    assert daemon.proc is not None
    steps = Steps(data / "wiki", daemon.proc.pid, point.step if point else None)
    asked = threading.Thread(target=lambda: _ask(daemon, verb), daemon=True)
    started = time.monotonic()
    timer = kill_after(daemon.proc.pid, point.seconds) if point and point.seconds is not None else None
    asked.start()
    asked.join(timeout=60)
    seconds = time.monotonic() - started
    if timer is not None:
        timer.cancel()
    steps.close()
    daemon.stop(sig=9)
    restarted = Daemon(data, env=QUICK).start(timeout=60)
    settled(restarted)
    return Run(restarted, steps.count, seconds)


def _ask(daemon: Daemon, verb: Verb) -> None:
    try:
        daemon.request("POST", verb.path, verb.body)
    except OSError:  # killed mid-answer
        pass


# ---- what users see ---------------------------------------------------------------------------

def page_files(wiki: Path) -> dict[str, str]:
    """Every page file with a project line: its path → the project it names."""
    found = {}
    for path in wiki.rglob("*.md"):
        rel = path.relative_to(wiki).as_posix()
        if rel.startswith((".git/", ".ai-memory/")):
            continue
        match = _PROJECT_LINE.search(path.read_text())
        if match and "\ngenerated:" not in path.read_text()[:400]:
            found[rel] = match.group(1).strip("'\"")
    return found


def agree(files: dict[str, str]) -> None:
    """No page is split from its folder: the folder is the project its line names."""
    split = {rel: p for rel, p in files.items() if "/" in rel and project_name(p) != rel.split("/", 1)[0]}
    assert not split, f"pages whose folder and project: line disagree: {sorted(split.items())[:5]}"


def index_follows(data: Path, files: dict[str, str]) -> None:
    """Every page file is indexed under the project its line names, and nothing else is."""
    with sqlite3.connect(data / "db" / "memory.sqlite") as conn:
        indexed = {r[0]: r[1] for r in conn.execute("SELECT path, project FROM pages")}
    assert {rel: indexed.get(rel) for rel in files} == files
    assert set(indexed) <= set(files) | {rel for rel in indexed if (data / "wiki" / rel).exists()}


def aliases(data: Path) -> dict[str, dict[str, str]]:
    path = data / "wiki" / ".ai-memory" / "projects.json"
    return json.loads(path.read_text()) if path.exists() else {"aliases": {}, "sessions": {}}


def hits(daemon: Daemon, q: str, project: str) -> list[str]:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": q, "project": project, "k": 50})
    assert status == 200, body
    return [h["path"] for h in body["hits"] if h.get("path")]


def history_never_half(data: Path, template: Path, *folders: str) -> None:
    """No commit made since the template holds a page whose folder and project line disagree."""
    start = pygit2.Repository(str(template / "wiki")).head.target
    repo = pygit2.Repository(str(data / "wiki"))
    for commit in repo.walk(repo.head.target):
        if commit.id == start:
            break
        for folder in folders:
            if folder not in commit.tree:
                continue
            for rel, text in _blobs(repo, commit.tree[folder], folder):
                match = _PROJECT_LINE.search(text)
                if match and "\ngenerated:" not in text[:400]:
                    assert project_name(match.group(1)) == folder, (commit.message.splitlines()[0], rel)


def _blobs(repo: pygit2.Repository, tree: Any, prefix: str) -> Iterator[tuple[str, str]]:
    for entry in tree:
        obj = repo[entry.id]
        if isinstance(obj, pygit2.Tree):
            yield from _blobs(repo, obj, f"{prefix}/{entry.name}")
        elif entry.name.endswith(".md"):
            yield f"{prefix}/{entry.name}", obj.data.decode("utf-8", "replace")


def sessions_follow(daemon: Daemon, session: str, project: str, prompt: str, cwd_project: str) -> None:
    with sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite") as conn:
        assert {r[0] for r in conn.execute("SELECT project FROM observations WHERE session_id = ?", (session,))} \
            == {project}
        assert conn.execute("SELECT project FROM sessions WHERE id = ?", (session,)).fetchone()[0] == project
    status, brief, _ = daemon.request("POST", "/v1/briefing", {"session_id": f"after-{session}",
                                                              "cwd": f"/home/dev/{cwd_project}"})
    assert status == 200 and prompt in brief["text"], brief


def moved_whole(daemon: Daemon, src: str, dst: str) -> str:
    """A rename or a merge: src's pages all under src (not done) or all under dst (done)."""
    data = daemon.data_dir
    files = page_files(data / "wiki")
    agree(files)
    index_follows(data, files)
    ids = {re.search(r"^id: (.+)$", (data / "wiki" / rel).read_text(), re.M).group(1): rel  # type: ignore[union-attr]
           for rel in files if "/facts/" in rel}
    mine = {i: rel for i, rel in ids.items() if i.startswith(f"{src}-fact-")}
    assert len(mine) == PAGES, f"{len(mine)} of {PAGES} pages of {src} left"
    folders = {rel.split("/", 1)[0] for rel in mine.values()}
    assert folders in ({src}, {dst}), f"{src}'s pages split between {folders}"
    done = folders == {dst}
    assert (aliases(data)["aliases"].get(src) == dst) is done
    final = dst if done else src
    found = hits(daemon, f"quartz{src}", final)
    assert found and all(p.startswith(f"{final}/") for p in found), found
    sessions_follow(daemon, f"{src}-sess", final, f"Tidy the {src} exporter", src)
    return "done" if done else "not begun"


def purged_whole(daemon: Daemon, project: str = "pp") -> str:
    data = daemon.data_dir
    files = page_files(data / "wiki")
    agree(files)
    index_follows(data, files)
    left = [rel for rel in files if rel.startswith(f"{project}/facts/")]
    with sqlite3.connect(data / "db" / "memory.sqlite") as conn:
        buried = {r[0] for r in conn.execute("SELECT path FROM tombstones WHERE reason = 'purged'")}
    if left:
        assert len(left) == PAGES and not buried, (len(left), len(buried))
        return "not begun"
    assert {p for p in buried if "/facts/" in p} == {f"{project}/facts/fact-{i:03d}.md" for i in range(PAGES)}
    found = hits(daemon, f"quartz{project}", project)
    assert not found, found
    return "done"


def session_moved_whole(daemon: Daemon, session: str = "ms-sess", src: str = "ms", dst: str = "msd") -> str:
    data = daemon.data_dir
    files = page_files(data / "wiki")
    agree(files)
    index_follows(data, files)
    pages = [rel for rel in files if f"\nsession_id: {session}\n" in (data / "wiki" / rel).read_text()]
    assert len(pages) == 1, pages
    done = pages[0].startswith(f"{dst}/")
    assert (aliases(data)["sessions"].get(session) == dst) is done
    final = dst if done else src
    sessions_follow(daemon, session, final, f"Tidy the {src} exporter", final)
    return "done" if done else "not begun"


def _with_history(daemon: Daemon, template: Path, src: str, dst: str) -> str:
    outcome = moved_whole(daemon, src, dst)
    history_never_half(daemon.data_dir, template, src, dst)
    return outcome


def _session_with_history(daemon: Daemon, template: Path) -> str:
    outcome = session_moved_whole(daemon)
    history_never_half(daemon.data_dir, template, "ms", "msd")
    return outcome


RENAME = Verb("rename", "/v1/projects/rename", {"from": "rp", "to": "rq"},
              lambda d, t: _with_history(d, t, "rp", "rq"))
MERGE = Verb("merge", "/v1/projects/merge", {"from": "mm", "to": "dst"}, lambda d, t: _with_history(d, t, "mm", "dst"))
PURGE = Verb("purge", "/v1/projects/purge", {"project": "pp", "confirm": True}, lambda d, t: purged_whole(d))
MOVE_SESSION = Verb("move-session", "/v1/sessions/ms-sess/move", {"project": "msd"},
                    lambda d, t: _session_with_history(d, t))


def kill_everywhere(template: Path, tmp_path: Path, verb: Verb) -> str:
    """The verb run whole once (its steps and its time here), then killed at STEP_POINTS steps
    and TIME_POINTS moments spread across it, each checked after the restart; a summary line."""
    whole = run_verb(template, tmp_path / "whole", verb, None)
    try:
        assert verb.check(whole.daemon, template) == "done"
    finally:
        whole.daemon.stop()
    total, took = whole.steps, whole.seconds
    points = sorted({Point(step=max(1, round(total * k / (STEP_POINTS - 1)))) for k in range(STEP_POINTS)},
                    key=lambda p: p.step or 0)
    points += [Point(seconds=took * (k + 0.5) / TIME_POINTS) for k in range(TIME_POINTS)]
    outcomes: dict[str, int] = {}
    for n, point in enumerate(points):
        run = run_verb(template, tmp_path / f"t{n}", verb, point)
        try:
            outcome = verb.check(run.daemon, template)
        except AssertionError as exc:
            raise AssertionError(f"{verb.name} killed at {point}: {exc}") from exc
        finally:
            run.daemon.stop()
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        shutil.rmtree(tmp_path / f"t{n}", ignore_errors=True)
    assert len(points) >= 20
    return f"{verb.name}: {total} steps in {took:.2f} s; {len(points)} points tried, failures 0: {outcomes}"
