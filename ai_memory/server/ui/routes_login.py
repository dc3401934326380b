"""Getting into the web view: the API call that makes a one-time login code (and says whether it
is still waiting), the page that shows whose account a code opens, the confirmation that
exchanges it for a session cookie, and logging out.

A code never logs a browser in by itself: a link or a page someone else sends (with a code of
their own account) would otherwise put the victim's browser in the sender's session (login
CSRF). The code leads to a page naming the account; the session starts only when the person
confirms there, a form the security middleware accepts only from the daemon's own origin. The
page answers a GET (a link pasted into a browser) and a POST: the form of the 0600 file
``ai-memory ui`` hands the browser, so that the code is in no process's command line. Its
stylesheet is the one open asset (``STYLE_PATH``): the rest of ``/ui/static/`` needs a session.
"""

from __future__ import annotations

from aiohttp import web

from ai_memory.core import wire
from ai_memory.server.body import SMALL, read_form, read_json
from ai_memory.server.identity import token_user
from ai_memory.server.keys import UI_ACCESS, UI_SITE
from ai_memory.server.ui.access import CODE_TTL_S, SESSION_TTL_S
from ai_memory.server.ui.pages import SECURITY_HEADERS, asset, page

LOGIN_PATH = "/ui/login"
CONFIRM_PATH = "/ui/login/confirm"
STYLE_PATH = "/ui/login/ui.css"  # the view's stylesheet, for the page shown before any session
routes = web.RouteTableDef()


@routes.post("/v1/ui/login")
async def new_login(request: web.Request) -> web.Response:
    """(bearer token) → a login code for the token's user, good once, for ``CODE_TTL_S`` seconds."""
    code = request.app[UI_ACCESS].new_code(token_user(request))
    return web.json_response({"path": f"{LOGIN_PATH}?code={code}", "code": code, "expires_in_s": CODE_TTL_S})


@routes.post("/v1/ui/login/state")
async def login_state(request: web.Request) -> web.Response:
    """{code} → {pending}: whether the caller's own code still waits to be used."""
    body = wire.parse(wire.LoginCodeBody, await read_json(request, SMALL))
    user = request.app[UI_ACCESS].user_of(body["code"])
    return web.json_response({"pending": user is not None and user == token_user(request)})


@routes.get(LOGIN_PATH)
async def login_link(request: web.Request) -> web.Response:
    return _confirmation(request, request.query.get("code", ""))


@routes.post(LOGIN_PATH)
async def login_form(request: web.Request) -> web.Response:
    code = (await read_form(request)).get("code")
    return _confirmation(request, code if isinstance(code, str) else "")


def _confirmation(request: web.Request, code: str) -> web.Response:
    """The page naming the account a live code opens, with the button that logs in; without a
    live code, a 401 page that says how to get one."""
    user = request.app[UI_ACCESS].user_of(code)
    if user is None:
        return page(request, "login.html", status=401, had_code=bool(code))
    return page(request, "login.html", code=code, login_user=user)


@routes.get(STYLE_PATH)
async def login_style(request: web.Request) -> web.Response:
    """The stylesheet every page uses (nothing in it is anyone's), open so the login page has it."""
    return asset("ui.css")


@routes.post(CONFIRM_PATH)
async def confirm(request: web.Request) -> web.Response:
    """The person confirmed on the daemon's own page: the code becomes a session cookie."""
    code = (await read_form(request)).get("code")
    redeemed = request.app[UI_ACCESS].redeem(code) if isinstance(code, str) else None
    if redeemed is None:
        return page(request, "login.html", status=401, had_code=True)
    sid, site = redeemed[0], request.app[UI_SITE]
    response = web.Response(status=303, headers={"Location": site.link("/ui/"), **SECURITY_HEADERS})
    response.set_cookie(site.cookie_name, sid, **site.cookie(request), max_age=int(SESSION_TTL_S))
    return response


@routes.post("/ui/logout")
async def logout(request: web.Request) -> web.Response:
    site = request.app[UI_SITE]
    request.app[UI_ACCESS].end(request.cookies.get(site.cookie_name))
    response = web.Response(status=303, headers={"Location": site.link(LOGIN_PATH), **SECURITY_HEADERS})
    response.del_cookie(site.cookie_name, **site.cookie(request))
    return response
