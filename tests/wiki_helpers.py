"""Helpers for wiki tests: waiting for search, reading git with the stock CLI."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable

from conftest import Daemon


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, step: float = 0.05) -> float:
    """Poll until true; return the seconds it took (AssertionError on timeout)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if predicate():
            return time.monotonic() - t0
        time.sleep(step)
    raise AssertionError(f"not true within {timeout} s")


def search_paths(daemon: Daemon, q: str) -> list[str]:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": q, "all": True, "k": 20})
    assert status == 200, body
    return [h["path"] for h in body["hits"]]


def git(wiki: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(wiki), *args], capture_output=True, text=True, check=True).stdout


def page_text(title: str, body: str, project: str = "acme-api", type_: str = "Note") -> str:
    return f"---\ntype: {type_}\ntitle: {title}\nproject: {project}\n---\n# {title}\n\n{body}\n"
