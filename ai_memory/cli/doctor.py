"""``ai-memory doctor``: find what stands between the agents and their memory, with a fix for each."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ai_memory.cli.common import client_from, config_from, print_json
from ai_memory.config import Config
from ai_memory.core.errors import DaemonUnavailable

HELP = "check the daemon, token, hooks and spool; print a fix for each problem"
EXAMPLE = "example: ai-memory doctor --json"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(run=run)


def check_token(config: Config) -> Check:
    path = config.token_path
    if not path.exists():
        return Check("token", False, f"{path} is missing", "run: ai-memory serve (it creates the token)")
    mode = path.stat().st_mode & 0o777
    if mode != 0o600:
        return Check("token", False, f"{path} has mode {oct(mode)}", f"run: chmod 600 {path}")
    return Check("token", True, f"{path} (0600)")


def check_daemon(config: Config) -> tuple[Check, dict | None]:
    client = client_from(config)
    try:
        reply = client.get("/status")
    except DaemonUnavailable:
        return Check("daemon", False, f"not reachable at {client.url}", "run: ai-memory serve"), None
    if not reply.ok:
        fix = "check that the token file matches the daemon's data dir" if reply.status == 401 else "see the daemon log"
        return Check("daemon", False, f"answered {reply.status} at {client.url}", fix), None
    return Check("daemon", True, f"{client.url}, version {reply.body['version']}"), reply.body


def check_hooks(config: Config, agent: str) -> Check:
    from ai_memory.client.agent_settings import Target, is_ours, read_settings

    found = []
    for scope in ("user", "project"):
        target = Target(agent, scope, Path.home(), Path.cwd(), config.url, config.data_dir)
        try:
            _, doc = read_settings(target.settings_path)
        except Exception:  # a broken settings file is reported as not installed
            continue
        hooks = doc.get("hooks") if isinstance(doc, dict) else None
        handlers = [h for groups in (hooks or {}).values() if isinstance(groups, list)
                    for g in groups if isinstance(g, dict) for h in g.get("hooks", [])]
        if any(is_ours(h, config.url) for h in handlers):
            found.append(f"{scope} ({target.settings_path})")
    if found:
        return Check(f"hooks:{agent}", True, "installed in " + ", ".join(found))
    return Check(f"hooks:{agent}", False, "not installed", f"run: ai-memory install-hooks --agent {agent}")


def check_spool(config: Config) -> Check:
    spool = config.sub("spool")
    backlog = len(list(spool.glob("*.json"))) if spool.exists() else 0
    bad = len(list((spool / "bad").glob("*"))) if (spool / "bad").exists() else 0
    detail = f"{backlog} waiting, {bad} unreadable"
    if bad:
        return Check("spool", False, detail, f"inspect and delete the files in {spool / 'bad'}")
    if backlog > 100:
        return Check("spool", False, detail, "start the daemon; it drains the spool within seconds")
    return Check("spool", True, detail)


def check_agents(status: dict | None) -> Check:
    if status is None:
        return Check("last events", False, "unknown: the daemon is not reachable", "run: ai-memory serve")
    agents = status.get("agents") or {}
    if not agents:
        return Check("last events", False, "no event received yet", "install hooks, then start an agent session")
    return Check("last events", True, ", ".join(f"{a} {t[:19].replace('T', ' ')}" for a, t in sorted(agents.items())))


def run(args: argparse.Namespace) -> int:
    config = config_from(args)
    daemon, status = check_daemon(config)
    checks = [daemon, check_token(config)]
    checks += [check_hooks(config, agent) for agent in ("claude", "codex", "gemini")]
    checks += [check_spool(config), check_agents(status)]
    # Hooks for every agent are not expected: one installed agent is enough.
    hook_checks = [c for c in checks if c.name.startswith("hooks:")]
    problems = [c for c in checks if not c.ok and not c.name.startswith("hooks:")]
    if not any(c.ok for c in hook_checks):
        problems += hook_checks
    if args.json:
        print_json({"ok": not problems, "checks": [asdict(c) for c in checks]})
    else:
        for c in checks:
            mark = "ok " if c.ok else ("-- " if c in hook_checks and c not in problems else "!! ")
            print(f"{mark}{c.name}: {c.detail}" + (f"\n   fix: {c.fix}" if not c.ok and c in problems else ""))
    return 1 if problems else 0
