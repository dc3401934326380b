"""What every web-view handler shares: rendering a template for the request's user, and the
view's own assets (no CDN, no build step)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from importlib.resources import files
from typing import Any
from urllib.parse import quote

from aiohttp import web

from ai_memory.core.errors import AiMemoryError, NotFound
from ai_memory.server.keys import UI_SITE, UI_VIEWS

HTML = "text/html"
ASSETS = {"ui.css": "text/css", "ui.js": "text/javascript"}
MAX_NEXT_CHARS = 2000
SECURITY_HEADERS = {
    # everything the view needs comes from the daemon itself; no frame may hold it
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # "no-referrer" makes a form's Origin "null"
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


def page(request: web.Request, template: str, status: int = 200, **context: Any) -> web.Response:
    session = request.get("ui_session")
    context = {"user": request.get("user"), "csrf": session.csrf if session else "", "path": request.path,
               "done": request.query.get("done", ""), "base": request.app[UI_SITE].prefix, **context}
    text = request.app[UI_VIEWS].render(template, context)
    return web.Response(text=text, content_type=HTML, status=status, headers=SECURITY_HEADERS)


def error_page(request: web.Request, exc: AiMemoryError) -> web.Response:
    """A typed error as the view shows it: the same status the JSON route would answer."""
    return page(request, "error.html", status=exc.status, error=exc.message, detail=exc.detail)


def back_to(request: web.Request, fallback: str, done: str) -> web.Response:
    """After a POST, the page it came from (a path of ours only), told what was done."""
    target = str(request.get("form_next") or fallback)
    if not target.startswith("/ui/") or len(target) > MAX_NEXT_CHARS or not target.isprintable():
        target = fallback  # never another site, and never a header a newline could split
    sep = "&" if "?" in target else "?"
    location = request.app[UI_SITE].link(f"{target}{sep}done={quote(done)}")
    return web.Response(status=303, headers={"Location": location, **SECURITY_HEADERS})


def html_errors(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]):
    """A web-view handler whose typed errors come back as an HTML page, not JSON."""
    @wraps(handler)
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except AiMemoryError as exc:
            return error_page(request, exc)
    return wrapped


def asset(name: str) -> web.Response:
    """One of the view's files in ``static/`` (``ASSETS``); NotFound for any other name."""
    if name not in ASSETS:
        raise NotFound("no such asset", detail=name[:100])
    text = (files("ai_memory.server.ui") / "static" / name).read_text(encoding="utf-8")
    return web.Response(text=text, content_type=ASSETS[name], headers=SECURITY_HEADERS)
