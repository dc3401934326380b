"""What ai-memory's hooks cost a real agent session, per agent, beside the agent's own floor.

    python benchmarks/agent_overhead.py [--agent NAME ...] [--runs 3] [--tools 10] [--json OUT]
    python benchmarks/agent_overhead.py --claude-floors [--runs 7] [--tools 20] [--json OUT]

Default: for every agent CLI of the real-agent suite (pinned, installed into
~/.cache/ai-memory/agents on first use, each against the suite's scripted model server), the
same scripted session of ``--tools`` shell calls with ai-memory installed by its own install
verbs, in four conditions, interleaved ``--runs`` times so a change in the machine's load falls
on all of them: the hooks made no-ops (the installed hook client replaced by ``cat >/dev/null``:
what the agent itself spends on running a hook per event, the floor), then the real hooks with
the daemon up, stopped and hung (SIGSTOP). It prints each condition's median wall time and the
time added per tool call over the floor ((median - floor median) / tool calls).

``--claude-floors``: the older, finer look at Claude Code alone: no hooks at all, the no-op
hooks and a no-op MCP server (``noop_mcp.py``) each alone and together, and ai-memory with the
daemon up, stopped and hung, each as a ratio of the no-hooks median (target: at most 1.10).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "agents"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

sys.path.insert(0, str(REPO / "tests"))

from clis import PINNED, CliUnavailable, ensure  # noqa: E402
from hook_latency import free_port, wait_healthy  # noqa: E402
from stub_model import Call, Script, StubModel  # noqa: E402

TARGET_RATIO = 1.10
FLOORS = ("no-op hooks only", "no-op MCP only", "no-op floor")
CONDITIONS = ("no hooks", *FLOORS, "daemon up", "daemon stopped", "daemon hung")
NOOP_MCP = Path(__file__).resolve().parent / "noop_mcp.py"


class Daemon:
    def __init__(self, data_dir: Path, port: int, env: dict[str, str]) -> None:
        self.data_dir, self.port, self.env = data_dir, port, env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(self.port)],
                                     env=self.env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_healthy(self.port)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)


def ai_memory(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "-m", "ai_memory.cli", *args], env=env, cwd=REPO, check=True,
                   stdout=subprocess.DEVNULL)


def claude_env(home: Path, stub: StubModel) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR")}
    return {**keep, "HOME": str(home), "NO_COLOR": "1", "ANTHROPIC_BASE_URL": stub.url, "ANTHROPIC_API_KEY": "sk-stub",
            "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}


def session(claude: Path, home: Path, project: Path, stub: StubModel, tools: int) -> tuple[float, float]:
    """Wall seconds, and CPU seconds of Claude Code's process tree (its hooks and MCP server are
    its children, reaped by it): the CPU figure is what load elsewhere on the machine does not move."""
    stub.run(Script([Call("shell", {"command": f"echo call-{i}"}) for i in range(tools)], reply="Done."))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([str(claude), "-p", "Run the checks", "--allowedTools", "Bash", "mcp__ai-memory"],
                          env=claude_env(home, stub), cwd=project, capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode != 0:
        raise RuntimeError(f"claude exited {done.returncode}: {done.stderr[-2000:]}")
    calls = sum(1 for r in stub.log if r.main)
    if calls != tools + 1:
        raise RuntimeError(f"the session made {calls} model requests, expected {tools + 1}")
    return seconds, cpu


def install_floor(installed: Path, floor: Path, *, hooks: bool, mcp: bool) -> None:
    """Copy the installed Claude settings into ``floor``: its hooks made ``true`` (or none), its
    MCP server the no-op one (or none)."""
    settings = json.loads((installed / ".claude" / "settings.json").read_text())
    for groups in settings["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                hook["command"] = "true"
    (floor / ".claude").mkdir(parents=True)
    (floor / ".claude" / "settings.json").write_text(json.dumps(settings if hooks else {}))
    state = json.loads((installed / ".claude.json").read_text())
    state["mcpServers"] = {name: {"type": "stdio", "command": sys.executable, "args": ["-S", str(NOOP_MCP)]}
                           for name in state["mcpServers"]}
    if not mcp:
        del state["mcpServers"]
    (floor / ".claude.json").write_text(json.dumps(state))


def wait_drained(data: Path, timeout: float = 60.0) -> None:
    """The daemon has taken every spooled event (so its start-up work is not in the next run)."""
    deadline = time.monotonic() + timeout
    while any((data / "spool").glob("*.json")) and time.monotonic() < deadline:
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude-floors", action="store_true", help="the finer Claude Code comparison")
    parser.add_argument("--agent", action="append", choices=sorted(PINNED), help="default: every agent")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--tools", type=int)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.claude_floors:
        args.runs, args.tools = args.runs or 7, args.tools or 20
        claude_floors(args)
    else:
        args.runs, args.tools = args.runs or 3, args.tools or 10
        per_agent(args)


# ---- per agent ----------------------------------------------------------------------------------

PER_AGENT = ("no-op hooks", "daemon up", "daemon stopped", "daemon hung")
NOOP_HOOK = "#!/bin/sh\ncat >/dev/null\nprintf '{}\\n'\n"


def agent_world() -> ModuleType:
    """The real-agent suite's world (tests/agents/harness.py: its install, environment and argv
    per agent), loaded by path: this folder has a harness.py of its own."""
    spec = importlib.util.spec_from_file_location("agent_world", REPO / "tests" / "agents" / "harness.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def per_agent(args: argparse.Namespace) -> None:
    world_of = agent_world()
    agents = args.agent or sorted(PINNED)
    result: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        stub = StubModel().start()
        try:
            for agent in agents:
                try:
                    clis = {agent: ensure(PINNED[agent])}
                except CliUnavailable as exc:
                    print(f"{agent}: skipped ({exc})")
                    continue
                world = world_of.World(Path(tmp) / agent, clis, stub)
                try:
                    result[agent] = _measure(world, agent, args)
                finally:
                    world.thaw_daemon()
                    world.daemon.stop()
        finally:
            stub.close()
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


def _measure(world: Any, agent: str, args: argparse.Namespace) -> dict[str, object]:
    world.install(agent)
    hook = world.data_dir / "bin" / "ai-memory-hook"
    real = hook.read_bytes()

    def session() -> float:
        script = Script([Call("shell", {"command": f"echo call-{i}"}) for i in range(args.tools)], reply="Done.")
        run = world.run(agent, "Run the checks, please", script)
        if run.returncode != 0:
            raise RuntimeError(f"{agent} exited {run.returncode}: {run.stderr[-2000:]}")
        return run.seconds

    def condition(name: str) -> float:
        if name == "no-op hooks":
            hook.write_text(NOOP_HOOK)
            try:
                return session()
            finally:
                hook.write_bytes(real)
        if name == "daemon stopped":
            world.stop_daemon()
            try:
                return session()
            finally:
                world.start_daemon()
                wait_drained(world.data_dir)
        if name == "daemon hung":
            world.freeze_daemon()
            try:
                return session()
            finally:
                world.thaw_daemon()
        return session()

    session()  # the first run sets up the agent's home: not measured
    runs: dict[str, list[float]] = {c: [] for c in PER_AGENT}
    for _ in range(args.runs):
        for name in PER_AGENT:
            runs[name].append(condition(name))
    floor = statistics.median(runs["no-op hooks"])
    out: dict[str, object] = {"floor_median_s": round(floor, 3)}
    for name in PER_AGENT:
        median = statistics.median(runs[name])
        added_ms = (median - floor) / args.tools * 1000
        out[name] = {"median_s": round(median, 3), "runs_s": [round(t, 3) for t in runs[name]],
                     "added_per_tool_call_ms": round(added_ms, 1)}
        shown = "floor" if name == "no-op hooks" else f"{added_ms:+7.1f} ms per tool call over the floor"
        print(f"{agent:<9} {PINNED[agent].version:<9} {args.tools} tool calls, {name:<15}: median {median:6.2f} s  "
              f"{shown}  (runs {', '.join(f'{t:.2f}' for t in runs[name])})")
    return out


# ---- Claude Code: the finer comparison ------------------------------------------------------------

def claude_floors(args: argparse.Namespace) -> None:
    try:
        claude = ensure(PINNED["claude"])
    except CliUnavailable as exc:
        raise SystemExit(f"agent_overhead: {exc}") from None
    runs: dict[str, list[tuple[float, float]]] = {c: [] for c in CONDITIONS}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bare, installed, data, project = root / "bare", root / "home", root / "data", root / "project"
        floors = {name: root / f"floor-{i}" for i, name in enumerate(FLOORS)}
        for path in (bare, installed, project, *floors.values()):
            path.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        port = free_port()
        data.mkdir()
        (data / "config.toml").write_text(f"[server]\nport = {port}\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
        env.update(AI_MEMORY_DATA_DIR=str(data), HOME=str(installed), HF_HUB_OFFLINE="1",
                   AI_MEMORY_EMBED_ENABLED="0")
        for verb in ("install-hooks", "install-mcp"):
            ai_memory(env, verb, "--agent", "claude")
        ai_memory(env, "install-rules", "--agent", "claude", "--dir", str(project))
        for name, home in floors.items():
            install_floor(installed, home, hooks="MCP" not in name, mcp="hooks" not in name)
        daemon = Daemon(data, port, env)
        stub = StubModel().start()
        try:
            daemon.start()
            for home in (bare, *floors.values(), installed):  # first runs set up each HOME; not measured
                session(claude, home, project, stub, 1)
            for _ in range(args.runs):
                runs["no hooks"].append(session(claude, bare, project, stub, args.tools))
                for name, home in floors.items():
                    runs[name].append(session(claude, home, project, stub, args.tools))
                runs["daemon up"].append(session(claude, installed, project, stub, args.tools))
                daemon.signal(signal.SIGSTOP)
                runs["daemon hung"].append(session(claude, installed, project, stub, args.tools))
                daemon.signal(signal.SIGCONT)
                daemon.stop()
                runs["daemon stopped"].append(session(claude, installed, project, stub, args.tools))
                daemon.start()
                wait_drained(data)
        finally:
            daemon.stop()
            stub.close()
    times = {c: [wall for wall, _ in rows] for c, rows in runs.items()}
    cpu = {c: statistics.median(c_s for _, c_s in rows) for c, rows in runs.items()}
    base = statistics.median(times["no hooks"])
    result = {}
    for condition in CONDITIONS:
        median = statistics.median(times[condition])
        result[condition] = {"median_s": round(median, 3), "runs_s": [round(t, 3) for t in times[condition]],
                             "cpu_median_s": round(cpu[condition], 3), "cpu_ratio": round(cpu[condition] / cpu["no hooks"], 3),
                             "ratio": round(median / base, 3)}
        mark = "" if condition == "no hooks" or condition in FLOORS else (
            "  ok" if median / base <= TARGET_RATIO else "  OVER 1.10")
        print(f"claude -p, {args.tools} tool calls, {condition:<16}: median {median:6.2f} s  ratio {median / base:5.3f}"
              f"{mark}  (runs {', '.join(f'{t:.2f}' for t in times[condition])})")
    print("CPU of Claude Code's process tree, median s (ratio): " + ", ".join(
        f"{c} {cpu[c]:.2f} ({cpu[c] / cpu['no hooks']:.3f})" for c in CONDITIONS))
    floor_s = statistics.median(times["no-op floor"])
    beyond = {c: round(statistics.median(times[c]) / floor_s, 3) for c in CONDITIONS if c.startswith("daemon")}
    print("beyond the floor (median / no-op floor median): "
          + ", ".join(f"{c} {ratio:.3f}" for c, ratio in beyond.items()))
    result["beyond_floor"] = beyond
    print(f"Claude Code {PINNED['claude'].version}; target: every ratio <= {TARGET_RATIO}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
