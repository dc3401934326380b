"""Helpers for the LLM tests: a daemon configured for the stub, a session driven to its end,
and the job row read back."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import yaml

from conftest import Daemon
from llm_stub import StubServer
from wiki_helpers import wait_until

PROPOSAL = {
    "summary": "Fixed the flaky login test by waiting for the session cookie.",
    "memories": [
        {"kind": "gotcha", "title": "Login test races the session cookie",
         "text": "The login test must wait for the session cookie before it asserts; a fixed sleep flakes."},
        {"kind": "decision", "title": "Tokens live in the system keyring",
         "text": "We keep API tokens in the system keyring, never in config files.", "tags": ["security"]},
    ],
}


def llm_config(stub: StubServer, provider: str = "openai", **keys: Any) -> str:
    base = stub.url + ("/v1" if provider == "openai" else "")
    values = {"provider": provider, "base_url": base, "model": "stub-model", "backoff_s": 0.1, "timeout_s": 5.0,
              **keys}
    lines = ["[llm]"] + [f"{k} = {json.dumps(v)}" for k, v in values.items()]  # JSON scalars are TOML's
    return "\n".join(lines) + "\n"


def start_daemon(data_dir: Path, config: str, env: dict[str, str] | None = None) -> Daemon:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "config.toml").write_text(config)
    return Daemon(data_dir, env=env).start()


def drive_session(daemon: Daemon, fixtures: dict, session_id: str, cwd: str = "/home/dev/acme-api") -> str:
    """A whole Claude Code session up to SessionEnd; the session page's path once compiled."""
    order = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
    for name in order:
        payload = copy.deepcopy(fixtures[name][0])
        payload["session_id"], payload["cwd"] = session_id, cwd
        assert daemon.post_hook(payload)[0] == 202
    wait_until(lambda: session_page(daemon, session_id), timeout=15)
    return session_page(daemon, session_id)


def db(daemon: Daemon) -> sqlite3.Connection:
    conn = sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite")
    conn.row_factory = sqlite3.Row
    return conn


def session_page(daemon: Daemon, session_id: str) -> str | None:
    with db(daemon) as conn:
        row = conn.execute("SELECT page_path FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return row[0] if row else None


def job(daemon: Daemon, session_id: str) -> dict[str, Any] | None:
    conn = db(daemon)
    try:
        row = conn.execute("SELECT * FROM llm_jobs WHERE session_id = ?", (session_id,)).fetchone()
    except sqlite3.OperationalError:  # no such table: [llm] never ran here
        return None
    finally:
        conn.close()
    return dict(row) if row else None


def wait_for_state(daemon: Daemon, session_id: str, state: str, timeout: float = 20.0) -> dict[str, Any]:
    wait_until(lambda: (job(daemon, session_id) or {}).get("state") == state, timeout=timeout)
    return job(daemon, session_id)  # type: ignore[return-value]


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text()
    return (yaml.safe_load(text.split("---\n")[1]) or {}) if text.startswith("---\n") else {}


def generated_pages(daemon: Daemon) -> list[Path]:
    """Memory pages a model proposed (session pages aside)."""
    wiki = daemon.data_dir / "wiki"
    return sorted(p for p in wiki.rglob("*.md") if "/sessions/" not in str(p) and ".git" not in p.parts
                  and "generated" in frontmatter(p) and isinstance(frontmatter(p)["generated"], dict))
