"""Getting into the web view: the API call that makes a one-time login code, the code's
exchange for a session cookie, and logging out."""

from __future__ import annotations

from aiohttp import web

from ai_memory.server.identity import token_user
from ai_memory.server.keys import UI_ACCESS
from ai_memory.server.ui.access import CODE_TTL_S, COOKIE, SESSION_TTL_S
from ai_memory.server.ui.pages import SECURITY_HEADERS, page

routes = web.RouteTableDef()


@routes.post("/v1/ui/login")
async def new_login(request: web.Request) -> web.Response:
    """(bearer token) → a login link for the token's user, good once, for ``CODE_TTL_S`` seconds."""
    code = request.app[UI_ACCESS].new_code(token_user(request))
    return web.json_response({"path": f"/ui/login?code={code}", "expires_in_s": CODE_TTL_S})


@routes.get("/ui/login")
async def login(request: web.Request) -> web.Response:
    """A live code becomes a session cookie and a redirect to the view; anything else, a 401
    page that says how to get a link."""
    redeemed = request.app[UI_ACCESS].redeem(request.query.get("code", ""))
    if redeemed is None:
        return page(request, "login.html", status=401, had_code=bool(request.query.get("code")))
    sid, _ = redeemed
    response = web.Response(status=303, headers={"Location": "/ui/", **SECURITY_HEADERS})
    response.set_cookie(COOKIE, sid, max_age=int(SESSION_TTL_S), path="/ui", httponly=True, samesite="Strict",
                        secure=request.secure)
    return response


@routes.post("/ui/logout")
async def logout(request: web.Request) -> web.Response:
    request.app[UI_ACCESS].end(request.cookies.get(COOKIE))
    response = web.Response(status=303, headers={"Location": "/ui/login", **SECURITY_HEADERS})
    response.del_cookie(COOKIE, path="/ui")
    return response
