"""Shared fixtures: a real daemon process on a free port with a temporary data dir."""

from __future__ import annotations

import fcntl
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


# helper modules whose asserts say what they saw, as a test's own do
pytest.register_assert_rewrite("lifecycle_crash", "lifecycle_helpers", "wiki_helpers", "llm_helpers", "ui_helpers")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
# The model made for this CPU, shared by every test and test daemon of every run (made once under
# a lock, its digests checked at each use): outside the user's own cache, and kept between runs.
MODEL_CACHE = Path(tempfile.gettempdir()) / f"ai-memory-test-models-{os.getuid()}"
FIXTURES = SHARED / "fixtures" / "claude-code-hooks.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    # The caller's terminal says nothing about a CLI writing into a pipe (pytest-xdist's workers
    # inherit a $COLUMNS, which would cut the CLI's lines): a test that wants a width sets it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_") and k not in ("COLUMNS", "LINES")}
    # Embeddings: off unless a test turns them on (every hook would be encoded, on CI's two cores).
    # Where on, the model compiled for this CPU is shared by every test daemon (checked at each start).
    env.update({"AI_MEMORY_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "AI_MEMORY_EMBED_ENABLED": "0",
                "AI_MEMORY_EMBED_CACHE_DIR": str(MODEL_CACHE)}, **extra)
    return env


def run_cli(data_dir: Path, *args: str, input: str | None = None, timeout: float = 60,
            **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ai_memory.cli", *args], input=input, capture_output=True,
        text=True, timeout=timeout, env=cli_env(data_dir, **env), cwd=REPO,
    )


def on_a_terminal(argv: list[str], env: dict[str, str], columns: int = 100, stream: str = "stdout",
                  timeout: float = 60) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """Run ``argv`` with ``stream`` (stdout or stderr) on a pseudo-terminal of ``columns``
    columns, as a person's shell would; the finished process and what the terminal showed."""
    import fcntl
    import pty
    import struct
    import termios

    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    other = "stderr" if stream == "stdout" else "stdout"
    try:
        done = subprocess.run(argv, env=env, cwd=REPO, timeout=timeout,
                              **{stream: terminal, other: subprocess.PIPE})
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end closed: all is read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    return done, shown.decode(errors="replace").replace("\r\n", "\n")


class Daemon:
    """``ai-memory serve`` as a real subprocess, plus a raw HTTP helper to talk to it."""

    def __init__(self, data_dir: Path, port: int | None = None, extra_args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.env = env or {}
        self.port = port or free_port()
        self.extra_args = extra_args
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return (self.data_dir / "token").read_text().strip()

    def start(self, timeout: float = 30.0) -> "Daemon":
        log = open(self.data_dir.parent / f"daemon-{self.port}.log", "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(self.port), *self.extra_args],
            env=cli_env(self.data_dir, **self.env), stdout=log, stderr=log, cwd=REPO,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}; see {log.name}")
            try:
                if self.request("GET", "/health", auth=False)[0] == 200:
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("daemon did not become healthy")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # leave every thread's stack in the log, then fail loudly
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(1.0)
            self.proc.kill()
            log = (self.data_dir.parent / f"daemon-{self.port}.log").read_text()[-12000:]
            raise AssertionError(f"daemon did not stop within {timeout} s; its log:\n{log}") from None

    def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                headers: dict[str, str] | None = None, auth: bool = True,
                timeout: float = 30.0) -> tuple[int, Any, dict[str, str]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        hdrs = dict(headers or {})
        if auth:
            hdrs.setdefault("Authorization", f"Bearer {self.token}")
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            payload = resp.read()
        finally:
            conn.close()
        try:
            parsed = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload
        return resp.status, parsed, dict(resp.getheaders())

    def post_hook(self, payload: Any, agent: str = "claude", **headers: str) -> tuple[int, Any]:
        status, body, _ = self.request("POST", f"/hook?agent={agent}", payload, headers=headers or None)
        return status, body


def settings_backups(path: Path, data_dir: Path) -> list[Path]:
    """The backups install or uninstall verbs made of ``path``, oldest first: in the data dir
    (``settings-backups/<stamp>/<absolute path>``), never beside the user's file."""
    assert not list(path.parent.glob(path.name + ".bak-*")), f"a backup beside {path}"
    mirrored = str(path.resolve()).lstrip("/")
    found = [p for p in (data_dir / "settings-backups").glob(f"*/{mirrored}*")
             if p.name == path.name or p.name.removeprefix(path.name + ".").isdigit()]
    return sorted(found, key=lambda p: (p.relative_to(data_dir).parts[1], len(p.name), p.name))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def daemon(data_dir: Path) -> Iterator[Daemon]:
    d = Daemon(data_dir).start()
    yield d
    if d.proc and d.proc.poll() is None:
        d.stop()


@dataclass(frozen=True)
class Installed:
    """The wheel built from the checkout, and the fresh venv it is installed in."""

    wheel: Path
    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Built and installed once per run, shared by every test that needs it (minutes), and by
    the workers of a parallel run: the first builds under a lock, the others wait and reuse it."""
    from wheel_install import build_wheel, install

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    root = shared / "wheel"
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "ready").exists():
            install(build_wheel(root / "dist"), root / "venv")
            (root / "ready").touch()
    [wheel] = (root / "dist").glob("ai_memory-*.whl")
    return Installed(wheel, root / "venv")


def installed_env(data_dir: Path, installed: Installed, **extra: str) -> dict[str, str]:
    """The environment of a user of the installed tool: its bin/ first on PATH, no checkout."""
    env = cli_env(data_dir, **extra)
    env.pop("PYTHONPATH", None)
    env["PATH"] = f"{installed.bin}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.fixture(scope="session")
def claude_fixtures() -> dict[str, list[dict[str, Any]]]:
    if not FIXTURES.exists():
        pytest.skip(f"shared fixtures not found at {FIXTURES} (they live beside the repo in ../shared)")
    return json.loads(FIXTURES.read_text())
