"""``ai-memory project list``: the projects memory knows, through the running daemon."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Daemon, run_cli


def test_project_list_shows_each_project_with_its_pages_and_sessions(daemon: Daemon, data_dir: Path) -> None:
    for project, text in (("alpha", "Alpha deploys on Tuesdays."), ("beta", "Beta keeps logs 30 days."),
                          ("beta", "Beta's queue is SQS.")):
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": text, "kind": "fact", "project": project})
        assert status == 201, body
    done = run_cli(data_dir, "project", "list", "--json", AI_MEMORY_PORT=str(daemon.port))
    assert done.returncode == 0, done.stderr
    found = {p["project"]: p for p in json.loads(done.stdout)["projects"]}
    assert found["alpha"]["pages"] == 1 and found["beta"]["pages"] == 2
    assert found["beta"]["sessions"] == 0 and found["beta"]["last_activity"]
    text = run_cli(data_dir, "project", "list", AI_MEMORY_PORT=str(daemon.port))
    assert text.returncode == 0 and "alpha" in text.stdout and "beta" in text.stdout
