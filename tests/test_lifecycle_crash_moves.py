"""Project lifecycle verbs are crash-safe (rename, merge): the daemon is killed (SIGKILL) at many
points of the verb, by step (after its N-th change to the wiki's files, git's included) and by
time, and after a restart what users see is whole: every page of the project under exactly one
name, its ``project:`` line and folder agreeing, the aliases right, the index, search and the
briefing following the files, and no commit in git's history holding half of the verb. The
other verbs: ``test_lifecycle_crash_removals.py`` (two files, so a parallel run shares them out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lifecycle_crash import MERGE, RENAME, Verb, build_template, kill_everywhere


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_template(tmp_path_factory.mktemp("lifecycle") / "data")


@pytest.mark.parametrize("verb", [RENAME, MERGE], ids=lambda v: v.name)
def test_a_verb_killed_anywhere_is_whole_after_the_restart(template: Path, tmp_path: Path, verb: Verb,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    summary = kill_everywhere(template, tmp_path, verb)
    with capsys.disabled():
        print(f"\n{summary}")
