"""Project lifecycle verbs are crash-safe (purge, a session's move): the daemon is killed (SIGKILL) at many
points of the verb, by step (after its N-th change to the wiki's files, git's included) and by
time, and after a restart what users see is whole: every page of the project under exactly one
name, its ``project:`` line and folder agreeing, the aliases right, the index, search and the
briefing following the files, and no commit in git's history holding half of the verb. The
other verbs: ``test_lifecycle_crash_moves.py`` (two files, so a parallel run shares them out)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import Daemon, run_cli
from lifecycle_crash import (
    MOVE_SESSION, PAGES, PURGE, Verb, agree, build_template, hits, kill_everywhere, page_files, settled,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_template(tmp_path_factory.mktemp("lifecycle") / "data")


@pytest.mark.parametrize("verb", [PURGE, MOVE_SESSION], ids=lambda v: v.name)
def test_a_verb_killed_anywhere_is_whole_after_the_restart(template: Path, tmp_path: Path, verb: Verb,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    summary = kill_everywhere(template, tmp_path, verb)
    with capsys.disabled():
        print(f"\n{summary}")


def test_a_folder_renamed_by_hand_is_reported_and_the_fix_works(template: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(template, data, symlinks=True)
    (data / "wiki" / "rp").rename(data / "wiki" / "renamed-by-hand")  # as Obsidian would
    daemon = Daemon(data).start()
    try:
        settled(daemon)
        status = json.loads(run_cli(data, "status", "--json", "--url", daemon.url).stdout)
        assert {"folder": "renamed-by-hand", "project": "rp", "pages": PAGES + 1} in status["wiki"]["folder_mismatches"]
        lint = json.loads(run_cli(data, "lint", "--json", "--url", daemon.url).stdout)
        [finding] = [f for f in lint["findings"] if f["rule"] == "project-folder"]
        fix = re.search(r"ai-memory (project merge \S+ \S+)", finding["fix"]).group(1).split()  # type: ignore[union-attr]
        done = run_cli(data, *fix, "--url", daemon.url)
        assert done.returncode == 0, done.stderr
        settled(daemon)
        agree(page_files(data / "wiki"))
        status = json.loads(run_cli(data, "status", "--json", "--url", daemon.url).stdout)
        assert status["wiki"]["folder_mismatches"] == []
        assert all(p.startswith("renamed-by-hand/") for p in hits(daemon, "quartzrp", "rp"))
    finally:
        daemon.stop()
