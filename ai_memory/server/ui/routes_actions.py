"""The web view's few writes: feedback on a page, cancelling a handoff, pinning a page.

Each is a form POST; the security middleware has already checked its CSRF token. Each calls
the use case its JSON route calls, records the same audit row, and redirects back (303).
"""

from __future__ import annotations

from aiohttp import web

from ai_memory.coordination import handoffs
from ai_memory.core.errors import InputError
from ai_memory.core.retention import FEEDBACK_DELTAS
from ai_memory.server.audit import audit
from ai_memory.server.body import read_form
from ai_memory.server.identity import token_user
from ai_memory.server.keys import RUNTIME
from ai_memory.server.ui.pages import back_to, html_errors
from ai_memory.wiki.page_access import feedback_on

routes = web.RouteTableDef()


async def _form(request: web.Request, *required: str) -> dict[str, str]:
    form = {k: v for k, v in (await read_form(request)).items() if isinstance(v, str)}
    missing = [k for k in required if not form.get(k, "").strip()]
    if missing:
        raise InputError(f"missing {missing[0]}")
    request["form_next"] = form.get("next", "")
    return form


@routes.post("/ui/feedback")
@html_errors
async def feedback(request: web.Request) -> web.Response:
    form = await _form(request, "path", "signal")
    if form["signal"] not in FEEDBACK_DELTAS:
        raise InputError("signal must be one of " + ", ".join(FEEDBACK_DELTAS), detail=form["signal"][:40])
    who = token_user(request)
    found, done = await feedback_on(request.app[RUNTIME].wiki, form["path"], form["signal"], who)
    await audit(request, who, "feedback", found["path"], form["signal"])
    return back_to(request, f"/ui/page?path={found['path']}",
                   f"{form['signal']}: salience {done['salience_before']:.2f} → {done['salience']:.2f}")


@routes.post("/ui/handoffs/cancel")
@html_errors
async def cancel_handoff(request: web.Request) -> web.Response:
    form = await _form(request, "id")
    who = token_user(request)
    handoff = await handoffs.cancel(request.app[RUNTIME].writer, form["id"], who)
    await audit(request, who, "handoff.cancel", handoff["id"])
    return back_to(request, "/ui/handoffs", f"handoff {handoff['id']} cancelled")


@routes.post("/ui/pin")
@html_errors
async def pin(request: web.Request) -> web.Response:
    form = await _form(request, "path", "pinned")
    if form["pinned"] not in ("true", "false"):
        raise InputError("pinned must be true or false")
    pinned, who = form["pinned"] == "true", token_user(request)
    done = await request.app[RUNTIME].memories.set_pinned(form["path"], pinned, who)
    await audit(request, who, "pin" if pinned else "unpin", done["path"])
    return back_to(request, f"/ui/page?path={done['path']}", "pinned" if pinned else "unpinned")
