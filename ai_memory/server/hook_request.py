"""What a hook's call to the daemon carries besides its payload's text: the session, the working
directory and the project it is for. One reading for the briefing (SessionStart) and prompt
recall (each prompt), the same as ingest's, so a page recorded for a session is found again by
the session's next call."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ai_memory.core.agent_dialects import in_common_terms, speaking_agent
from ai_memory.core.errors import InputError
from ai_memory.core.memory import check_project
from ai_memory.core.observation import cwd_of, session_id_of
from ai_memory.ingest.hooks import project_for
from ai_memory.server.identity import paths_are_here
from ai_memory.server.keys import RUNTIME


def hook_payload(request: web.Request, payload: dict[str, Any]) -> dict[str, Any]:
    """A hook's payload in common terms, read as its agent (``?agent=``) wrote it."""
    return in_common_terms(request.query.get("agent", ""), payload)


def agent_of(request: web.Request, payload: dict[str, Any]) -> str:
    """The agent a hook call is from (``?agent=``; Cursor when it ran Claude Code's hook), whose
    shape the answer takes."""
    return speaking_agent(request.query.get("agent", ""), payload)


def session_of(request: web.Request, payload: dict[str, Any]) -> str | None:
    """The payload's session, else ``?session_id=``, as ingest stores it."""
    return session_id_of(payload) or session_id_of({"session_id": request.query.get("session_id")})


def cwd_from(request: web.Request, payload: dict[str, Any]) -> str | None:
    """The payload's working directory, else ``?cwd=``."""
    return cwd_of(payload) or request.query.get("cwd") or None


def project_from(request: web.Request, payload: dict[str, Any], cwd: str | None) -> str:
    """The project named (``?project=`` or the payload's ``project``: what a client on another
    machine resolved itself), else ``cwd``'s, under the name it has now (a renamed project's old
    name gives the new one). InputError when neither is given."""
    named = request.query.get("project") or payload.get("project")
    if isinstance(named, str) and named:
        project = check_project(named)
    elif cwd:
        project = project_for(cwd, paths_are_here(request))
    else:
        raise InputError("missing project", detail="pass project, or cwd to derive it from")
    return request.app[RUNTIME].projects.canonical(project) or project
