"""Team mode, admin only: /v1/users (add, list, revoke) and /v1/audit."""

from __future__ import annotations

from aiohttp import web

from ai_memory.core import wire
from ai_memory.server.body import SMALL, query_limit, read_json
from ai_memory.server.identity import require_admin, token_user
from ai_memory.server.keys import RUNTIME
from ai_memory.coordination import audit_log

routes = web.RouteTableDef()


@routes.get("/v1/users")
async def get_users(request: web.Request) -> web.Response:
    require_admin(request)
    return web.json_response({"users": await request.app[RUNTIME].users.listing()})


@routes.post("/v1/users")
async def add_user(request: web.Request) -> web.Response:
    """{name} → 201 {user, token}: the token is in this answer and nowhere else."""
    require_admin(request)
    body = wire.parse(wire.UserBody, await read_json(request, SMALL))
    user, token = await request.app[RUNTIME].users.add(body["name"], by=token_user(request))
    return web.json_response({"user": user, "token": token}, status=201)


@routes.post("/v1/users/{name}/revoke")
async def revoke_user(request: web.Request) -> web.Response:
    require_admin(request)
    user = await request.app[RUNTIME].users.revoke(request.match_info["name"], by=token_user(request))
    return web.json_response({"user": user})


@routes.get("/v1/audit")
async def get_audit(request: web.Request) -> web.Response:
    """?limit=&user=: the newest audit entries first."""
    require_admin(request)
    limit = query_limit(request)
    user = request.query.get("user") or None
    entries = await audit_log.entries(request.app[RUNTIME].reader, limit, user)
    return web.json_response({"entries": entries})
