"""POST /v1/recall: what memory holds for a prompt, handed over beside it (the prompt hook's
call, ``?format=hook`` with the agent's payload itself) or shown (``ai-memory recall``)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ai_memory.coordination.briefing import hook_output
from ai_memory.core.agent_payloads import typed_prompt
from ai_memory.core.errors import InputError
from ai_memory.core.memory import check_project
from ai_memory.ingest.hooks import project_for
from ai_memory.retrieval.prompt_recall import RecallAsk, recall
from ai_memory.server.body import EVENT, read_json
from ai_memory.server.identity import caller, paths_are_here
from ai_memory.server.keys import RUNTIME

routes = web.RouteTableDef()
PROMPT_EVENTS = {"gemini": "BeforeAgent"}  # the event a prompt hook answers; UserPromptSubmit elsewhere


@routes.post("/v1/recall")
async def post_recall(request: web.Request) -> web.Response:
    """Hook form: the payload ({prompt, session_id, cwd}); ``?agent=&event=&project=``; answers
    the JSON the agent's prompt hook prints. JSON form: ``{prompt, project?, cwd?, session_id?,
    explain?}`` → ``{project, items, text[, explain]}``."""
    body = await read_json(request, EVENT)
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object", detail='{"prompt": "...", "project": "acme-api"}')
    runtime = request.app[RUNTIME]
    hook = request.query.get("format") == "hook"
    if hook and not runtime.config.recall.on_prompt:
        return web.json_response({})
    ask = RecallAsk(prompt=_prompt(body), project=_project(request, body), owner=caller(request, body),
                    session_id=_text(body.get("session_id")), explain=body.get("explain") is True)
    found = await recall(runtime.search_locally, runtime.reader, runtime.writer, runtime.recall_settings, ask)
    if hook:
        agent = request.query.get("agent", "")
        event = request.query.get("event") or PROMPT_EVENTS.get(agent, "UserPromptSubmit")
        return web.json_response(hook_output(event, found.text))
    return web.json_response(found.as_json(explain=ask.explain))


def _prompt(body: dict[str, Any]) -> str:
    prompt = body.get("prompt")
    if not isinstance(prompt, str):
        raise InputError("missing prompt", detail='{"prompt": "why did we pin pygit2 below 2?"}')
    return typed_prompt(prompt)  # without the context an agent put in front of what was typed


def _project(request: web.Request, body: dict[str, Any]) -> str:
    """The project named (by a client that resolved it itself), else the cwd's."""
    named = request.query.get("project") or _text(body.get("project"))
    cwd = _text(body.get("cwd"))
    if named:
        project = check_project(named)
    elif cwd:
        project = project_for(cwd, paths_are_here(request))
    else:
        raise InputError("missing project", detail="pass project, or cwd to derive it from")
    return request.app[RUNTIME].projects.canonical(project) or project


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
