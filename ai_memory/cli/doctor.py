"""``ai-memory doctor``: find what stands between the agents and their memory, with a fix for each.

Hooks are checked live: for each agent whose settings hold ai-memory's hooks, the script they
run must exist and be executable, the daemon of the data dir they name must answer where the
client will look for it (its endpoint record, else its configured port), and that data dir's
token must be accepted: an authenticated ping, as the hook would send it. Hooks an older
install left as ``type: "http"`` (they lose every event while the daemon is down) are a
problem with the reinstall as its fix. Whether the daemon starts at login (``service``) is a
warning.

Beside the daemon, token, hooks and spool, it checks the data dir itself, with or without a
running daemon: the database (SQLite ``integrity_check``), the wiki's git repository (``git
fsck``), drift between files and index, free disk space (below ``DISK_FREE_MIN_BYTES`` writes are
near failing: hooks get 503 and keep their events in the spool) and the age of the newest backup.
A warning (no backup yet, or one older than ``BACKUP_MAX_AGE_DAYS``) is shown with its fix but
does not fail the run: backups are the operator's choice.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ai_memory.cli.common import client_from, config_from, print_json
from ai_memory.config import Config, load_config
from ai_memory.core.errors import DaemonUnavailable
from ai_memory.datadir import DISK_FREE_MIN_BYTES

HELP = "check the daemon, token, hooks, spool, database, git, drift, disk space and backups; a fix for each"
EXAMPLE = "example: ai-memory doctor --json"
BACKUP_MAX_AGE_DAYS = 7.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    warning: bool = False  # a failed warning is shown with its fix but does not fail the run
    absent: bool = False  # hooks not installed for this agent: a problem only when no agent has them


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


def _our_handlers(agent: str, config: Config) -> list[tuple[str, Any]]:
    """(scope and settings file, handler) for every ai-memory handler in the agent's settings."""
    from ai_memory.client import hook_files
    from ai_memory.client.agent_settings import Target, is_ours, read_settings

    found: list[tuple[str, Any]] = []
    for scope in ("user", "project"):
        target = Target(agent, scope, Path.home(), Path.cwd(), config.url, config.data_dir)
        if agent in hook_files.FILE_AGENTS:
            found += [(f"{scope} ({hook_files.where(target)})", {"command": c}) for c in hook_files.our_commands(target)]
            continue
        try:
            _, doc = read_settings(target.settings_path)
        except Exception:  # a broken settings file is reported as not installed
            continue
        hooks = doc.get("hooks")
        groups = [g for gs in hooks.values() if isinstance(gs, list) for g in gs] if isinstance(hooks, dict) else []
        found += [(f"{scope} ({target.settings_path})", h) for g in groups if isinstance(g, dict)
                  for h in g.get("hooks", []) if is_ours(h, config.url)]
    return found


def _hook_target(handler: dict[str, Any]) -> tuple[Path, Path] | None:
    """(script, data dir) a command handler runs: ``<script> --data-dir DIR AGENT EVENT``, or an
    older install's ``AI_MEMORY_DATA_DIR=DIR <script> AGENT EVENT``; a project's portable hook
    runs ``ai-memory`` from PATH (a bare name when it is not there) for the default data dir."""
    from ai_memory.client.agent_settings import runs_our_cli

    if runs_our_cli(str(handler.get("command", ""))):
        return Path(shutil.which("ai-memory") or "ai-memory"), load_config(None).data_dir
    try:
        words = shlex.split(str(handler.get("command", "")))
    except ValueError:
        return None
    assigned: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith(("-", "/")):
        name, _, value = words.pop(0).partition("=")
        assigned[name] = value
    if not words:
        return None
    named = words[words.index("--data-dir") + 1] if "--data-dir" in words[:-1] else assigned.get("AI_MEMORY_DATA_DIR")
    return Path(words[0]), Path(named) if named else load_config(None).data_dir


def _live(script: Path, data_dir: Path) -> str | None:
    """Why hooks running ``script`` for ``data_dir`` would lose their events; None when they will not."""
    if not script.is_absolute():
        return (f"{script} is not on PATH (the project's hooks run it by name); fix: install ai-memory, "
                "or put the bin/ folder holding it on PATH")
    if not script.is_file() or not os.access(script, os.X_OK):
        return f"{script} is missing or not executable; fix: run ai-memory install-hooks again"
    config = load_config(data_dir)
    client = client_from(config)
    try:
        reply = client.get("/status")
    except DaemonUnavailable:
        return (f"nothing answers at {client.url} for {data_dir}; fix: run ai-memory serve --data-dir {data_dir}"
                " (or ai-memory service install); events wait in the spool meanwhile")
    if reply.status == 401:
        return (f"the daemon at {client.url} refuses the token in {config.token_path}; fix: point the hooks at "
                f"the data dir that daemon serves (ai-memory install-hooks --data-dir ...)")
    if not reply.ok:
        return f"the daemon at {client.url} answered {reply.status}; fix: see its log"
    return None


def check_hooks(config: Config, agent: str) -> Check:
    from ai_memory.client.agent_settings import is_legacy_http

    handlers = _our_handlers(agent, config)
    if not handlers:
        return Check(f"hooks:{agent}", False, "not installed", f"run: ai-memory install-hooks --agent {agent}", absent=True)
    where = ", ".join(dict.fromkeys(place for place, _ in handlers))
    if any(is_legacy_http(h, config.url) for _, h in handlers):
        return Check(f"hooks:{agent}", False, f"installed in {where} as http hooks, which lose every event while "
                     "the daemon is down", f"run: ai-memory install-hooks --agent {agent}")
    targets = {t for _, h in handlers if (t := _hook_target(h)) is not None}
    problems = [problem for script, data_dir in sorted(targets) if (problem := _live(script, data_dir))]
    if problems:
        detail, _, fix = problems[0].partition("; fix: ")
        return Check(f"hooks:{agent}", False, f"installed in {where}, but {detail}", fix)
    reached = ", ".join(f"{d} via {s}" for s, d in sorted(targets))
    return Check(f"hooks:{agent}", True, f"installed in {where}; live (daemon answers, token accepted) for {reached}")


def check_service(config: Config) -> Check | None:
    """Whether the daemon starts at login; None where there is no service manager to ask."""
    from ai_memory.cli.service import target_for
    from ai_memory.client.service import status

    if not sys.platform.startswith("linux") and sys.platform != "darwin":
        return None
    report = status(target_for(config.data_dir))
    if report.installed and report.enabled is not False:
        return Check("service", True, f"{report.manager}: {report.path} (enabled: {report.enabled})")
    detail = f"{report.manager}: installed but not enabled" if report.installed else f"{report.manager}: not installed"
    return Check("service", False, detail + " (the daemon does not start at login)", "run: ai-memory service install",
                 warning=True)


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


def check_database(config: Config) -> Check:
    from ai_memory.store.integrity import integrity_problems

    if not config.db_path.exists():
        return Check("database", False, f"{config.db_path} does not exist", "run: ai-memory serve (it creates it)")
    problems = integrity_problems(config.db_path)
    if problems:
        return Check("database", False, "integrity_check: " + "; ".join(problems[:3]),
                     "stop the daemon, then run: ai-memory reindex (rebuilds it from wiki/ and raw/)")
    wal = config.db_path.with_name(config.db_path.name + "-wal")
    size = config.db_path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return Check("database", True, f"integrity_check ok ({size // 1024} KiB with its WAL)")


def check_git(config: Config) -> Check:
    from ai_memory.wiki.fsck import fsck

    wiki = config.sub("wiki")
    if not (wiki / ".git").exists():
        return Check("wiki git", False, f"{wiki} is not a git repository", "run: ai-memory serve (it creates it)")
    result = fsck(wiki)
    if not result.ok:
        return Check("wiki git", False, f"{result.method}: " + "; ".join(result.problems[:3]),
                     f"restore the wiki from a backup, or re-clone it; the files themselves are intact: check {wiki}")
    walked = f", {result.objects} objects read" if result.objects else ""
    return Check("wiki git", True, f"{result.method} clean{walked}")


def check_commits(config: Config, status: dict | None) -> Check:
    """Whether page writes reach git: the daemon's committer when it runs, else the repository."""
    from ai_memory.wiki.git_repair import index_readable, lock_files, stale_lock

    wiki = config.sub("wiki")
    git = ((status or {}).get("wiki") or {}).get("git")
    if git and git.get("failing"):
        return Check("wiki commits", False, f"failing since {git['failing_since']} ({git['uncommitted_writes']} page"
                     f" writes not in git yet): {git['last_error']}",
                     "a lock another git holds clears by itself; otherwise stop the daemon and run doctor again"
                     " (it names the lock or index to repair); every waiting page is committed once git can")
    if not (wiki / ".git").exists():
        return Check("wiki commits", False, "no repository", "run: ai-memory serve")
    if status is None and lock_files(wiki):
        lock = stale_lock(wiki) or lock_files(wiki)[0]
        stale = "left by a process that is gone" if stale_lock(wiki) else "held by a git command right now"
        return Check("wiki commits", False, f"{lock} exists ({stale}): no commit can be made",
                     f"if no git command runs in {wiki}: rm {lock} (ai-memory serve removes a stale one itself)")
    if not index_readable(wiki):
        return Check("wiki commits", False, f"{wiki / '.git' / 'index'} cannot be read",
                     "run: ai-memory serve (it moves it aside and rebuilds it from HEAD)")
    if git:
        return Check("wiki commits", True, f"{git['commits']} commits since start, none failing")
    return Check("wiki commits", True, "the repository takes commits")


def check_drift(config: Config) -> Check:
    from ai_memory.wiki.lint import persistent_drift

    if not config.db_path.exists():
        return Check("index drift", False, "not checked: no database yet", "run: ai-memory serve", warning=True)
    drift = persistent_drift(config.sub("wiki"), config.sub("raw"), config.db_path)
    if drift:
        return Check("index drift", False, f"{len(drift)} differences, e.g. {drift[0]}",
                     "run: ai-memory reindex (ai-memory reindex --check lists them all)")
    return Check("index drift", True, "files, journal and index agree")


def check_disk(config: Config) -> Check:
    where = config.data_dir if config.data_dir.exists() else config.data_dir.parent
    free = shutil.disk_usage(where).free
    detail = f"{free / 2**20:.0f} MiB free on the filesystem of {config.data_dir}"
    if free < DISK_FREE_MIN_BYTES:
        return Check("disk space", False, detail + f" (below {DISK_FREE_MIN_BYTES // 2**20} MiB)",
                     "free space there: at 0 writes fail with 503 (hooks keep their events in the spool)"
                     " and resume by themselves once space is back")
    return Check("disk space", True, detail)


def check_backup(config: Config) -> Check:
    from ai_memory.backup import latest_backup

    found = latest_backup(config.data_dir)
    if found is None:
        return Check("backup", False, f"no backup in {config.data_dir / 'backups'}", "run: ai-memory backup",
                     warning=True)
    newest, age_s = found
    age_days = age_s / 86400
    detail = f"newest {newest.name}, {age_days:.1f} days old"
    if age_days > BACKUP_MAX_AGE_DAYS:
        return Check("backup", False, detail + f" (older than {BACKUP_MAX_AGE_DAYS:.0f} days)",
                     "run: ai-memory backup", warning=True)
    return Check("backup", True, detail)


def run(args: argparse.Namespace) -> int:
    from ai_memory.client.agent_settings import AGENTS

    config = config_from(args)
    daemon, status = check_daemon(config)
    checks = [daemon, check_token(config)]
    checks += [check_hooks(config, agent) for agent in AGENTS]
    checks += [check_spool(config), check_agents(status)]
    checks += [check_database(config), check_git(config), check_commits(config, status), check_drift(config),
               check_disk(config),
               check_backup(config)]
    checks += [c for c in (check_service(config),) if c is not None]
    # Hooks for every agent are not expected: one installed agent is enough; broken ones are a problem.
    absent = [c for c in checks if c.absent]
    problems = [c for c in checks if not c.ok and not c.warning and not c.absent]
    if len(absent) == len(AGENTS):
        problems += absent
    if args.json:
        print_json({"ok": not problems, "checks": [asdict(c) for c in checks]})
    else:
        for c in checks:
            shown = c in problems or (c.warning and not c.ok)
            mark = "ok " if c.ok else ("!! " if c in problems else "-- ")
            print(f"{mark}{c.name}: {c.detail}" + (f"\n   fix: {c.fix}" if shown else ""))
    return 1 if problems else 0
