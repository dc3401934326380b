"""POST /v1/recall: what memory holds for a prompt, handed over beside it (the prompt hook's
call, ``?format=hook`` with the agent's payload itself) or shown (``ai-memory recall``)."""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from ai_memory.coordination.briefing import hook_output
from ai_memory.core.agent_payloads import typed_prompt
from ai_memory.core import wire
from ai_memory.core.errors import InputError
from ai_memory.retrieval.prompt_recall import RecallAsk, recall
from ai_memory.server.body import EVENT, read_json
from ai_memory.server.hook_request import agent_of, cwd_from, hook_payload, project_from, session_of
from ai_memory.server.identity import caller
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()
PROMPT_EVENT_OF = {"gemini": "BeforeAgent"}  # the event an agent's prompt hook answers; UserPromptSubmit elsewhere


@routes.post("/v1/recall")
async def post_recall(request: web.Request) -> web.Response:
    """Hook form: the payload ({prompt, session_id, cwd}); ``?agent=&event=&project=``; answers
    the JSON the agent's prompt hook prints. JSON form: ``{prompt, project?, cwd?, session_id?,
    explain?}`` → ``{project, items, text[, explain]}``."""
    body = await read_json(request, EVENT)
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object", detail='{"prompt": "...", "project": "acme-api"}')
    hook = request.query.get("format") == "hook"
    if not hook:  # the schema's fields checked; an agent's own keys (sessionId, ...) read as ingest reads them
        wire.parse(wire.RecallBody, body)
    speaking = agent_of(request, body)
    body = hook_payload(request, body)
    runtime = request.app[RUNTIME]
    if hook and (not runtime.config.recall.on_prompt or not str(body.get("prompt") or "").strip()):
        return web.json_response({})  # off, or an agent's prompt hook fired without a prompt (Qwen Code)
    ask = RecallAsk(prompt=_prompt(body), project=project_from(request, body, cwd_from(request, body)),
                    owner=caller(request, body), session_id=session_of(request, body),
                    explain=body.get("explain") is True, deadline=_deadline(request))
    found = await recall(runtime.search_locally, runtime.reader, runtime.writer, runtime.recall_settings, ask)
    if hook:
        event = request.query.get("event") or PROMPT_EVENT_OF.get(speaking, "UserPromptSubmit")
        return web.json_response(hook_output(speaking, event, found.text))
    return web.json_response(found.as_json(explain=ask.explain))


MAX_BUDGET_MS = 60_000


def _deadline(request: web.Request) -> float | None:
    """``?budget_ms=``: how long the caller waits (a hook gives up after it); past it the answer
    is silent and nothing is recorded as handed over. None: no limit."""
    given = request.query.get("budget_ms")
    if given is None:
        return None
    if not given.isdigit() or not 1 <= int(given) <= MAX_BUDGET_MS:
        raise InputError("bad budget_ms", detail=f"milliseconds, 1 to {MAX_BUDGET_MS}")
    return time.monotonic() + int(given) / 1000


def _prompt(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise InputError("missing prompt", detail='{"prompt": "why did we pin pygit2 below 2?"}')
    return typed_prompt(prompt)  # without the context an agent put in front of what was typed
