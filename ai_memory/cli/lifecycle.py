"""Where the project lifecycle verbs (``project rename|merge|purge``, ``move-session``) act, and
how their reports read.

Through the daemon when one serves the data dir (``POST /v1/projects/<verb>``,
``POST /v1/sessions/<id>/move``, with the data dir's admin token): it is the only writer while
it runs, and its map of old names must change at once. Else on the data dir itself: the serve
lock held, the very same ``ProjectLifecycle`` on a wiki and writer of this process.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ai_memory.cli.common import config_from

if TYPE_CHECKING:
    from ai_memory.config import Config

DAEMON_WAIT_S = 600.0  # a big project's move is one commit and a reconcile: give it time


def change(args: argparse.Namespace, verb: str, body: dict[str, Any]) -> Mapping[str, Any]:
    from ai_memory import datadir
    from ai_memory.client.api import MemoryAPI
    from ai_memory.client.http import DaemonClient

    config = config_from(args)
    if getattr(args, "url", None) or (config.data_dir.exists() and datadir.locked_pid(config.data_dir) is not None):
        token = config.token_path.read_text().strip() if config.token_path.exists() else None
        api = MemoryAPI(DaemonClient(config.url, token, DAEMON_WAIT_S))
        if verb == "move-session":
            return api.move_session(body.pop("session_id"), body)
        return api.project_change(verb, body)
    return asyncio.run(_offline(config, verb, body))


async def _offline(config: "Config", verb: str, body: dict[str, Any]) -> dict[str, Any]:
    from ai_memory import datadir
    from ai_memory.wiki.offline import offline_wiki
    from ai_memory.wiki.projects import ProjectLifecycle

    datadir.prepare(config.data_dir)
    lock = datadir.ServeLock(config.data_dir)
    lock.acquire()  # DataDirLocked if a daemon started since we looked: the user runs it again
    try:
        async with offline_wiki(config) as wiki:
            projects = ProjectLifecycle(wiki)
            await projects.load()
            dry_run = bool(body.get("dry_run"))
            if verb == "rename":
                return await projects.rename(body["from"], body["to"], dry_run=dry_run)
            if verb == "merge":
                return await projects.merge(body["from"], body["to"], dry_run=dry_run)
            if verb == "purge":
                return await projects.purge(body["project"], confirm=bool(body.get("confirm")), dry_run=dry_run)
            return await projects.move_session(body["session_id"], body["project"], dry_run=dry_run)
    finally:
        lock.release()


def render(report: Mapping[str, Any]) -> str:
    """The report as a person reads it: one line of what happened, then each file moved."""
    would = report["dry_run"]
    commit = f" in commit {report['git_commit'][:12]}" if report.get("git_commit") else ""
    if report.get("verb") is None:  # a purge
        head = (f"{'would remove' if would else 'purged'} {report['project']}: {len(report['removed'])} pages"
                f"{' would become' if would else ' are now'} tombstones{commit} (git history keeps them)")
        lines = [head] + [f"  {p}" for p in report["removed"]]
        return "\n".join(lines + [f"  kept (changed since): {p}" for p in report.get("skipped", [])])
    what = {"rename": "renamed", "merge": "merged", "move-session": "moved the session"}[report["verb"]]
    head = (f"{'would have ' if would else ''}{what} {report['from']} → {report['to']}: "
            f"{len(report['moved'])} files moved{commit}, {len(report['frontmatter_rewritten'])} pages' project"
            f" line rewritten" + ("" if report["verb"] == "move-session" else
                                  f"; {report['from']} now resolves to {report['to']}"))
    lines = [head] + [f"  {m['from']} → {m['to']}" for m in report["moved"]]
    lines += [f"  renamed (the name was taken): {m['from']} → {m['to']}" for m in report["renamed"]]
    lines += [f"  link left in place: {p}" for p in report["links_left"]]
    lines += [f"  project line not rewritten (change it by hand): {p}"
              for p in report.get("frontmatter_not_rewritten", [])]
    return "\n".join(lines)
