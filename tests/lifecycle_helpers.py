"""What the project lifecycle tests share: the CLI against a test daemon, its rows, a search."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from typing import Any

from conftest import Daemon, run_cli


def cli(daemon: Daemon, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(daemon.data_dir, *args, AI_MEMORY_PORT=str(daemon.port))


def ok_json(daemon: Daemon, *args: str) -> Any:
    done = cli(daemon, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rows(daemon: Daemon, sql: str, *args: Any) -> list[tuple]:
    with sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite") as conn:
        return conn.execute(sql, args).fetchall()


def hits(daemon: Daemon, q: str, project: str) -> list[str]:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": q, "project": project, "k": 20})
    assert status == 200, body
    return [h["path"] for h in body["hits"]]
