"""Helper processes a rebuild reads with: helpers that cannot start leave the work to the
process that asked for it, and a helper whose parent is killed ends too.

Each case runs in a process of its own, as a script that rebuilds would: starting helpers is
made to fail there, or that process is killed, and the test process stays untouched."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from wiki_helpers import wait_until

SQUARES_WITHOUT_HELPERS = """
import json, logging, multiprocessing, os, sys
from multiprocessing import resource_tracker
from ai_memory.wiki import read_ahead

def squares(batch):
    return [(n * n, os.getpid()) for n in batch]

if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
    if sys.argv[1] == "feeding":  # the pool can be made; its first helper cannot start
        resource_tracker.ensure_running()
    multiprocessing.get_context("spawn").set_executable("/nonexistent/python3")
    print(json.dumps(list(read_ahead.in_order(squares, range(read_ahead.BATCH * 6), helpers=2))))
"""

HELPER_THAT_WAITS = """
import os, sys, threading
from pathlib import Path
from ai_memory.wiki import read_ahead

def say_pid_and_wait(batch):
    out = Path(batch[0])
    out.with_suffix(".tmp").write_text(str(os.getpid()))
    os.replace(out.with_suffix(".tmp"), out)
    threading.Event().wait()
    return batch

if __name__ == "__main__":
    list(read_ahead.in_order(say_pid_and_wait, [sys.argv[1]] * 2, helpers=1))
"""


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("failing", ["starting", "feeding"])
def test_helpers_that_cannot_start_leave_the_work_here(tmp_path: Path, failing: str) -> None:
    """No executable to spawn: the pool cannot be made (its resource tracker cannot start), or
    it is made and its helper dies at once. Every result comes back, in order, from the
    script's own process, after one warning."""
    done = subprocess.run([sys.executable, str(_script(tmp_path, SQUARES_WITHOUT_HELPERS)), failing],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    script_pid = got[0][1]
    assert got == [[n * n, script_pid] for n in range(len(got))] and len(got) > 64
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "ai_memory.wiki.read_ahead helper processes stopped" in warnings[0], done.stderr


def _gone(pid: int) -> bool:
    """The process has ended: no such process, or a zombie its new parent has not reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_helper_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    said = tmp_path / "helper.pid"
    parent = subprocess.Popen([sys.executable, str(_script(tmp_path, HELPER_THAT_WAITS)), str(said)], cwd=REPO)
    helper = None
    try:
        wait_until(lambda: said.exists() or parent.poll() is not None, timeout=60)
        assert parent.poll() is None, "the script ended before its helper started"
        helper = int(said.read_text())
        assert not _gone(helper)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        wait_until(lambda: _gone(helper), timeout=15, step=0.1)
    finally:
        parent.kill()
        parent.wait(timeout=10)
        if helper is not None and not _gone(helper):
            os.kill(helper, signal.SIGKILL)  # left behind by a failing run
