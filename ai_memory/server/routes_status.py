"""Health, status, and reading a session's observations back."""

from __future__ import annotations

import platform
import sqlite3
import time

from aiohttp import web

import ai_memory
from ai_memory.core.errors import NotFound
from ai_memory.runtime import Runtime
from ai_memory.server.keys import MOUNTS, RUNTIME
from ai_memory.store.pages import broken_pages, page_count
from ai_memory.store.observations import agents_last_seen, counts, session_exists, session_observations
from ai_memory.wiki.project_index import blocked_indexes

routes = web.RouteTableDef()


@routes.get("/health")
async def health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True, "version": ai_memory.__version__})


@routes.get("/status")
async def status(request: web.Request) -> web.Response:
    report = await status_report(request.app[RUNTIME])
    report["mounts"] = dict(request.app.get(MOUNTS, {}))
    return web.json_response(report)


async def status_report(runtime: Runtime) -> dict:
    """What the daemon says of itself: counts, agents, embeddings, wiki, spool, workers, writer."""
    stats = runtime.writer.stats
    numbers = await runtime.reader.run(counts)
    agents = await runtime.reader.run(agents_last_seen)
    numbers["pages"] = await runtime.reader.run(page_count)
    broken = await runtime.reader.run(broken_pages)
    wiki_dir = runtime.config.sub("wiki")
    blocked = await runtime.reader.run(lambda c: blocked_indexes(c, wiki_dir))
    return {
        "version": ai_memory.__version__,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "data_dir": str(runtime.config.data_dir),
        "pid": __import__("os").getpid(),
        "uptime_s": round(time.time() - runtime.started_at, 3),
        "counts": numbers,
        "agents": agents,
        "embeddings": await _embedding_status(runtime),
        "wiki": {"broken_pages": broken, "blocked_indexes": blocked, "commits": runtime.wiki.committer.commits,
                 "sessions_compiled": runtime.sessions.compiled, "symlinks": runtime.wiki.symlinks,
                 "project_aliases": len(runtime.projects.map.aliases), "projects_file": runtime.projects.problems,
                 "git": runtime.wiki.committer.describe()},
        "spool": runtime.spool.as_dict(),
        "llm": await runtime.llm.describe() if runtime.llm else {"enabled": False},
        "query_workers": runtime.model_worker.describe() if runtime.model_worker else {"configured": 0},
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
    runtime = request.app[RUNTIME]
    session_id = request.match_info["session_id"]
    if not await runtime.reader.run(lambda c: session_exists(c, session_id)):
        raise NotFound("no such session", detail=session_id)
    rows = await runtime.reader.run(lambda c: session_observations(c, session_id))
    return web.json_response({"session_id": session_id, "observations": rows})


async def _embedding_status(runtime) -> dict:
    job = runtime.embedding
    if job is None:
        return {"enabled": False}
    backlog = await job.backlog()
    return {"enabled": True, "model": job.embedder.model_id, "ready": job.ready, "error": job.error,
            "embedded": job.embedded, "backlog": backlog}
