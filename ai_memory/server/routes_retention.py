"""Forgetting and feedback: /v1/forget-sweep, /v1/tombstones, /v1/feedback."""

from __future__ import annotations

from aiohttp import web

from ai_memory.core import wire
from ai_memory.server.audit import audit
from ai_memory.server.body import SMALL, query_limit, read_json
from ai_memory.server.identity import caller, require_admin
from ai_memory.server.keys import RUNTIME
from ai_memory.wiki.forget import tombstones as removed_pages
from ai_memory.wiki.page_access import feedback_on

routes = web.RouteTableDef()


@routes.post("/v1/forget-sweep")
async def forget_sweep(request: web.Request) -> web.Response:
    """{dry_run?}: remove cold episodic and expired pages (or only list them), purge old tombstones."""
    require_admin(request)  # the sweep (and its list) spans every user's pages, private ones included
    body = wire.parse(wire.SweepBody, await read_json(request, SMALL))
    dry_run = body.get("dry_run", False)
    report = await request.app[RUNTIME].forget_sweep(dry_run)
    answer = report.as_json()
    if not dry_run:
        await audit(request, caller(request, body), "forget-sweep", "wiki", f"{len(answer.get('removed') or [])} removed")
    return web.json_response(answer)


@routes.get("/v1/tombstones")
async def tombstones(request: web.Request) -> web.Response:
    """?project=&limit=: pages the sweep removed, newest first, with the commit that holds them."""
    require_admin(request)  # the sweep spans every user: its record is for the operator
    limit = query_limit(request)
    project = request.query.get("project") or None
    found = await removed_pages(request.app[RUNTIME].reader, project, limit)
    return web.json_response({"tombstones": found})


@routes.post("/v1/feedback")
async def feedback(request: web.Request) -> web.Response:
    """{path or id, signal}: move the page's salience (search authority and retention)."""
    body = wire.parse(wire.FeedbackBody, await read_json(request, SMALL))
    ref, signal = wire.page_ref(body), body["signal"]
    who = caller(request, body)
    found, result = await feedback_on(request.app[RUNTIME].wiki, ref, signal, who)
    await audit(request, who, "feedback", found["path"], str(signal))
    return web.json_response({**result, "id": found["uid"]})
