"""One world for the real agents: a temp HOME, a project, a daemon, the stub model, and the CLIs
configured the way a user would, by ``ai-memory install-hooks``, ``install-mcp`` and
``install-rules``; the only settings the suite writes itself are the ones that point each CLI at
the stub model and let it run unattended.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clis import PINNED
from conftest import REPO, Daemon, cli_env
from stub_model import Call, Logged, Script, StubModel

RUN_TIMEOUT_S = 240
# Qwen Code fires SessionEnd only in its interactive UI: a headless session is compiled after a
# Stop and sessions.idle_minutes of quiet, which this world makes seconds.
NO_SESSION_END = {"qwen"}


def project_name(agent: str) -> str:
    """Each agent works in a project of its own, so one's handoff is never another's."""
    return f"suite-{agent}"


@dataclass
class Run:
    agent: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[Logged]  # the stub's log of this run's model requests

    @property
    def main(self) -> list[Logged]:
        return [r for r in self.requests if r.main]

    def text(self) -> str:
        return "\n".join(r.text for r in self.requests)

    def check(self) -> "Run":
        assert self.returncode == 0, f"{self.agent} exited {self.returncode}\n{self.stdout[-3000:]}\n{self.stderr[-3000:]}"
        return self


def wait_until(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not true within {timeout} s")


@dataclass
class World:
    root: Path
    clis: dict[str, Path]
    stub: StubModel
    home: Path = field(init=False)
    data_dir: Path = field(init=False)
    daemon: Daemon = field(init=False)
    down_seconds: dict[str, float] = field(default_factory=dict)  # a session's time with the daemon stopped

    def __post_init__(self) -> None:
        self.home, self.data_dir = self.root / "home", self.root / "data"
        self.home.mkdir(parents=True)
        self.daemon = Daemon(self.data_dir)
        # The port is in the config too, so a client that finds no live daemon tries this one,
        # never the default port another daemon on this machine may hold.
        self.data_dir.mkdir(parents=True)
        (self.data_dir / "config.toml").write_text(f"[server]\nport = {self.daemon.port}\n\n[sessions]\n"
                                                   "idle_minutes = 0.05\n\n[wiki]\nreconcile_interval_s = 2\n")
        self.daemon.start()

    def project(self, agent: str) -> Path:
        path = self.root / "work" / agent
        if not path.exists():
            path.mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(path)], check=True)
            (path / ".ai-memory.toml").write_text(f'project = "{project_name(agent)}"\n')
        return path

    @property
    def token(self) -> str:
        return self.daemon.token

    # ---- setup as a user does it ------------------------------------------------------------

    def ai_memory(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**cli_env(self.data_dir), "HOME": str(self.home)}
        done = subprocess.run([sys.executable, "-m", "ai_memory.cli", *args], capture_output=True, text=True,
                              env=env, cwd=cwd or self.root, timeout=120)
        if check:
            assert done.returncode == 0, f"ai-memory {' '.join(args)}: {done.stderr}"
        return done

    def install(self, agent: str) -> None:
        self._model_settings(agent)
        for verb in ("install-hooks", "install-mcp"):
            self.ai_memory(verb, "--agent", agent)
        self.ai_memory("install-rules", "--agent", agent, "--dir", str(self.project(agent)))

    def _model_settings(self, agent: str) -> None:
        """What a user sets up once per CLI: where the model is, and no interactive prompts."""
        if agent == "codex":
            path = self.home / ".codex" / "config.toml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'model = "stub-model"\nmodel_provider = "stub"\n\n[model_providers.stub]\nname = "stub"\n'
                            f'base_url = "{self.stub.url}/v1"\nenv_key = "STUB_API_KEY"\nwire_api = "responses"\n')
        elif agent == "gemini":
            path = self.home / ".gemini" / "settings.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                                        "privacy": {"usageStatisticsEnabled": False}}, indent=2))
        elif agent == "qwen":
            path = self.home / ".qwen" / "settings.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}}, "model": {"name": "stub-model"},
                                        "general": {"enableAutoUpdate": False},
                                        "privacy": {"usageStatisticsEnabled": False},
                                        "telemetry": {"enabled": False}}, indent=2))
        elif agent == "cline":  # a provider without "updatedAt" is silently replaced by Cline's own
            settings = self.home / ".cline" / "data" / "settings"
            settings.mkdir(parents=True, exist_ok=True)
            provider = {"provider": "openai-compatible", "apiKey": "sk-stub", "model": "stub-model",
                        "baseUrl": f"{self.stub.url}/v1"}
            (settings / "providers.json").write_text(json.dumps({
                "version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
                "providers": {"openai-compatible": {"settings": provider, "updatedAt": "2026-01-01T00:00:00.000Z",
                                                    "tokenSource": "manual"}}}))
            (settings / "global-settings.json").write_text(json.dumps({"telemetryOptOut": True,
                                                                       "autoUpdateEnabled": False}))
        elif agent == "opencode":  # with the model catalog's fetch off, the model is declared here
            path = self.home / ".config" / "opencode" / "opencode.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            model = {"name": "Stub", "tool_call": True, "limit": {"context": 200000, "output": 8192}}
            path.write_text(json.dumps({
                "model": "anthropic/claude-stub", "small_model": "anthropic/claude-stub", "autoupdate": False,
                "share": "disabled", "provider": {"anthropic": {
                    "npm": "@ai-sdk/anthropic", "options": {"baseURL": f"{self.stub.url}/v1", "apiKey": "sk-stub"},
                    "models": {"claude-stub": model}}}}, indent=2))

    # ---- running a session ------------------------------------------------------------------

    def env(self, agent: str) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")}
        env = {**keep, "HOME": str(self.home), "NO_COLOR": "1", "CI": "1"}
        if agent == "claude":
            env.update(ANTHROPIC_BASE_URL=self.stub.url, ANTHROPIC_API_KEY="sk-stub", DISABLE_AUTOUPDATER="1",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1")
        elif agent == "codex":
            env.update(STUB_API_KEY="sk-stub")
        elif agent == "qwen":
            env.update(OPENAI_API_KEY="sk-stub", OPENAI_BASE_URL=f"{self.stub.url}/v1",
                       QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
        elif agent == "cline":  # local: no hub daemon left behind on a fixed port
            env.update(CLINE_SESSION_BACKEND_MODE="local", CLINE_NO_AUTO_UPDATE="1")
        elif agent == "opencode":
            env.update(OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_SHARE="1",
                       OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_PERMISSION='{"*": "allow"}')
        elif agent == "copilot":  # bring your own key: no GitHub account; its 235 MB unpacked once, in the cache
            env.update(COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false", COPILOT_PROVIDER_TYPE="anthropic",
                       COPILOT_PROVIDER_BASE_URL=self.stub.url, COPILOT_PROVIDER_API_KEY="sk-stub",
                       COPILOT_MODEL="claude-sonnet-4.6",
                       COPILOT_PKG_CACHE_HOME=str(PINNED["copilot"].home / "pkg-cache"))
        else:
            env.update(GEMINI_API_KEY="stub-key", GOOGLE_GEMINI_BASE_URL=self.stub.url,
                       GEMINI_CLI_TRUST_WORKSPACE="true", GEMINI_CLI_NO_RELAUNCH="true")
        return env

    def argv(self, agent: str, prompt: str) -> list[str]:
        cli = str(self.clis[agent])
        if agent == "claude":
            return [cli, "-p", prompt, "--allowedTools", "Bash", "mcp__ai-memory"]
        if agent == "codex":  # hooks are trusted in /hooks by a person; a test run cannot open it
            return [cli, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                    "--dangerously-bypass-hook-trust", prompt]
        if agent == "opencode":  # the prompt on stdin: `run` re-quotes an argument holding a space
            return [cli, "run"]
        if agent == "copilot":
            return [cli, "-p", prompt, "--allow-all-tools", "--no-auto-update", "--disable-client-telemetry"]
        if agent == "qwen":
            return [cli, "--yolo", "-p", prompt]
        if agent == "cline":  # a prompt of one word would be read as a sub-command
            return [cli, prompt]
        return [cli, "-p", prompt, "--yolo"]

    def run(self, agent: str, prompt: str, script: Script) -> Run:
        self.stub.run(script)
        t0 = time.monotonic()
        done = subprocess.run(self.argv(agent, prompt), capture_output=True, text=True, env=self.env(agent),
                              cwd=self.project(agent), timeout=RUN_TIMEOUT_S,
                              input=prompt if agent == "opencode" else "")
        seconds = time.monotonic() - t0
        return Run(agent, done.returncode, done.stdout, done.stderr, seconds, list(self.stub.log))

    # ---- the daemon's side ------------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None) -> Any:
        status, reply, _ = self.daemon.request(method, path, body)
        assert status in (200, 201, 202), (status, reply)
        return reply

    def sessions(self, agent: str) -> list[dict[str, Any]]:
        recent = self.api("GET", f"/v1/recent?project={project_name(agent)}&limit=100")
        return [s for s in recent["sessions"] if s["agent"] == agent]

    def new_session(self, agent: str, before: set[str], timeout: float = 60.0) -> dict[str, Any]:
        """The one session of ``agent`` not in ``before``, once it has ended (or, for an agent
        that never says so, once it is compiled)."""
        def ended() -> dict[str, Any] | None:
            fresh = [s for s in self.sessions(agent) if s["id"] not in before]
            done = "page_path" if agent in NO_SESSION_END else "ended_at"
            return fresh[0] if len(fresh) == 1 and fresh[0][done] else None
        return wait_until(ended, timeout, f"a new ended {agent} session")

    def observations(self, session_id: str) -> list[dict[str, Any]]:
        return self.api("GET", f"/v1/sessions/{session_id}/observations")["observations"]

    def page_of(self, agent: str, session_id: str, timeout: float = 60.0) -> str:
        def compiled() -> str | None:
            for s in self.sessions(agent):
                if s["id"] == session_id and s["page_path"]:
                    return (self.data_dir / "wiki" / s["page_path"]).read_text()
            return None
        return wait_until(compiled, timeout, f"the page of session {session_id}")

    def spooled(self) -> list[Path]:
        return sorted((self.data_dir / "spool").glob("*.json"))

    def stop_daemon(self) -> None:
        self.daemon.stop()

    def start_daemon(self) -> None:
        self.daemon.start()

    def freeze_daemon(self) -> None:
        assert self.daemon.proc is not None
        self.daemon.proc.send_signal(signal.SIGSTOP)

    def thaw_daemon(self) -> None:
        assert self.daemon.proc is not None
        self.daemon.proc.send_signal(signal.SIGCONT)


def shell(command: str) -> Call:
    return Call("shell", {"command": command})


def memory_query(query: str) -> Call:
    """ai-memory's search tool, under whatever name the CLI offers it to the model."""
    return Call("memory_query", {"query": query})
