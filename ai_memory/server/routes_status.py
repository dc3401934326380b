"""Health, status, and reading a session's observations back."""

from __future__ import annotations

import os
import platform
import sqlite3
import time

from aiohttp import web

import ai_memory
from ai_memory.overview.activity import session_events
from ai_memory.overview.status import index_status
from ai_memory.runtime import Runtime
from ai_memory.server.keys import API_DOCUMENT, MOUNTS, RUNTIME

routes = web.RouteTableDef()


@routes.get("/health")
async def health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True, "version": ai_memory.__version__})


@routes.get("/v1/openapi.json")
async def openapi(request: web.Request) -> web.Response:
    """The API's contract, made from ``core.wire`` (the same types the routes validate with),
    encoded once per app: the route is open to anyone who reaches the port."""
    return web.Response(body=request.app[API_DOCUMENT].encoded(), content_type="application/json")


@routes.get("/status")
async def status(request: web.Request) -> web.Response:
    report = await status_report(request.app[RUNTIME])
    mounts: dict[str, str] = request.app.get(MOUNTS, {})
    report["mounts"] = dict(mounts)
    return web.json_response(report)


async def status_report(runtime: Runtime) -> dict:
    """What the daemon says of itself: what the index holds (``overview.status``) and what each
    running part says of itself (embeddings, wiki, spool, LLM, workers, writer)."""
    stats = runtime.writer.stats
    index = await index_status(runtime.reader, runtime.config.sub("wiki"))
    return {
        "version": ai_memory.__version__,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "data_dir": str(runtime.config.data_dir),
        "pid": os.getpid(),
        "uptime_s": round(time.time() - runtime.started_at, 3),
        "counts": index["counts"],
        "agents": index["agents"],
        "embeddings": await runtime.embedding.describe() if runtime.embedding else {"enabled": False},
        "wiki": {"broken_pages": index["broken_pages"], "blocked_indexes": index["blocked_indexes"],
                 "commits": runtime.wiki.committer.commits, "sessions_compiled": runtime.sessions.compiled,
                 "symlinks": runtime.wiki.symlinks, "reconciles": runtime.wiki.reconciles,
                 "project_aliases": len(runtime.projects.map.aliases),
                 "pages_under_old_names": index["pages_under_old_names"],
                 "folder_mismatches": index["folder_mismatches"],
                 "projects_file": runtime.projects.problems + runtime.projects.unfinished
                 + runtime.projects.held_problems(),
                 "git": runtime.wiki.committer.describe()},
        "spool": runtime.spool.as_dict(),
        "quota": runtime.quota.describe(),
        "llm": await runtime.llm.describe() if runtime.llm else {"enabled": False},
        "writer": {
            "queue_depth": runtime.writer.depth,
            "batches": stats.batches,
            "jobs": stats.jobs,
            "mean_batch": round(stats.mean_batch, 2),
            "failed_batches": stats.failed_batches,
            "last_error": stats.last_error,
        },
    }


@routes.get("/v1/sessions/{session_id}/observations")
async def observations(request: web.Request) -> web.Response:
    session_id = request.match_info["session_id"]
    rows = await session_events(request.app[RUNTIME].reader, session_id)
    return web.json_response({"session_id": session_id, "observations": rows})

