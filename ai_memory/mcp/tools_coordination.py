"""Handoffs and messages between agents and projects.

Annotations, and why:
- begin / send: additive, not idempotent (each call leaves one more handoff or message).
- list: read-only.
- accept / pop: not read-only (a claim is a conditional update: the handoff or message goes to
  this caller and no other, exactly once), not idempotent (a second call claims the next one or
  nothing), and not destructive (the record stays, marked accepted or popped, and is returned).
- cancel: destructive (the handoff or message will never reach its receiver, and cannot be
  reopened) and idempotent (cancelling again changes nothing; it answers "conflict").

This server's own session id (one per process, i.e. per agent session) is recorded as the
handoff's source and as the claimer, so an agent never accepts the handoff it just left.
"""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from ai_memory.core.wire import MAX_TTL_S
from ai_memory.mcp import render
from ai_memory.mcp.context import ToolContext
from ai_memory.mcp.models import (
    AcceptOut, HandoffListOut, HandoffOut, HandoffState, Items, MessageListOut, MessageOut, MessageState,
    ProjectName, RecordId,
)
from ai_memory.mcp.outcome import attempt, read_only, writes

Agent = Annotated[str | None, Field(max_length=64, description="your agent name, e.g. claude, codex, gemini")]
Cwd = Annotated[str | None, Field(max_length=4096, description="directory; default: the agent's working directory")]
ListProject = Annotated[ProjectName | None, Field(
    description="project to list; default: the project of the agent's working directory")]
AllProjects = Annotated[bool, Field(description="list every project's instead")]


def register(server: MCPServer, ctx: ToolContext) -> None:
    for tool in (_handoff_begin, _handoff_list, _handoff_accept, _handoff_cancel,
                 _message_send, _message_list, _message_pop, _message_cancel):
        tool(server, ctx)


def _handoff_begin(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_handoff_begin", annotations=writes("Hand off work", destructive=False, idempotent=False),
                 description=(
        "Leave a handoff for the next agent: call it before stopping with work unfinished, or when another agent "
        "should continue. Say what was done and where it stands, the next steps, open questions and the files "
        "touched. The next agent session starting in this directory (or below it) receives it exactly once."))
    def memory_handoff_begin(
        summary: Annotated[str, Field(min_length=1, max_length=20_000, description="what was done, where it stands")],
        next_steps: Annotated[Items | None, Field(description="what to do next, in order")] = None,
        open_questions: Annotated[Items | None, Field(description="what is still undecided or unknown")] = None,
        files_touched: Annotated[Items | None, Field(description="files changed or central to the work")] = None,
        to_agent: Annotated[str | None, Field(max_length=64, description=(
            "only this agent may take it (claude, codex, gemini...); default: any"))] = None,
        from_agent: Agent = None,
        model: Annotated[str | None, Field(max_length=100, description="the model you are")] = None,
        shared: Annotated[bool, Field(description="visible to every owner on this daemon, not only yours")] = False,
        cwd: Cwd = None,
        project: Annotated[ProjectName | None, Field(description="default: the project of cwd")] = None,
    ) -> Annotated[CallToolResult, HandoffOut]:
        handoff = {"summary": summary, "next_steps": next_steps, "open_questions": open_questions,
                   "files_touched": files_touched, "to_agent": to_agent, "from_agent": from_agent, "model": model,
                   "shared": shared, "cwd": cwd or str(ctx.workdir), "project": project,
                   "session_id": ctx.session_id}
        return attempt(lambda: {"handoff": ctx.api.handoff_begin(**handoff)}, lambda d: render.handoff(d["handoff"]))


def _handoff_list(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_handoff_list", annotations=read_only("List handoffs"), description=(
        "List handoffs of a project, newest first, optionally by state. Use it to see whether work was handed "
        "off, or to find the id of a handoff you left and want to cancel. Listing claims nothing."))
    def memory_handoff_list(
        project: ListProject = None,
        all_projects: AllProjects = False,
        state: Annotated[HandoffState | None, Field(description="only handoffs in this state")] = None,
    ) -> Annotated[CallToolResult, HandoffListOut]:
        scoped = None if all_projects else (project or ctx.project)
        return attempt(lambda: {"handoffs": ctx.api.handoff_list(scoped, state)}, render.handoffs)


def _handoff_accept(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_handoff_accept", annotations=writes("Take a handoff", destructive=False,
                                                                  idempotent=False), description=(
        "Take over the handoff waiting for this directory (the newest open one left here or in a parent "
        "directory; deliberate handoffs before automatic ones) and continue that work. Exactly one agent gets "
        "each handoff; null means none is waiting. The SessionStart hook usually does this already."))
    def memory_handoff_accept(
        cwd: Cwd = None,
        agent: Agent = None,
        session_id: Annotated[str | None, Field(max_length=200, description=(
            "the session taking it; default: this MCP connection's id"))] = None,
    ) -> Annotated[CallToolResult, AcceptOut]:
        def call() -> dict[str, Any]:
            return {"handoff": ctx.api.handoff_accept(cwd or str(ctx.workdir), session_id or ctx.session_id, agent)}

        return attempt(call, render.accepted)


def _handoff_cancel(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_handoff_cancel", annotations=writes("Cancel a handoff", destructive=True,
                                                                  idempotent=True), description=(
        "Cancel an open handoff (find its id with memory_handoff_list), e.g. one you left and then finished "
        "yourself. A handoff already accepted cannot be cancelled."))
    def memory_handoff_cancel(
        handoff_id: Annotated[RecordId, Field(description="the handoff's id, from memory_handoff_list")],
    ) -> Annotated[CallToolResult, HandoffOut]:
        return attempt(lambda: {"handoff": ctx.api.handoff_cancel(handoff_id)}, lambda d: render.handoff(d["handoff"]))


def _message_send(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_message_send", annotations=writes("Message another project", destructive=False,
                                                                idempotent=False), description=(
        "Leave a note for the next agent working in another project, e.g. an API change its client must follow. "
        "It is shown once, in that project's next briefing, or to an agent that pops it. Not for this project's "
        "own next steps: use memory_handoff_begin for those."))
    def memory_message_send(
        to_project: Annotated[ProjectName, Field(description="the project that should read it")],
        body: Annotated[str, Field(min_length=1, max_length=20_000, description="the message")],
        from_project: Annotated[ProjectName | None, Field(description="default: the agent's project")] = None,
        from_agent: Agent = None,
        ttl_s: Annotated[int | None, Field(ge=1, le=MAX_TTL_S, description=(
            "seconds until it expires unread; default 14 days"))] = None,
    ) -> Annotated[CallToolResult, MessageOut]:
        message = {"to_project": to_project, "body": body, "from_project": from_project or ctx.project,
                   "from_agent": from_agent, "ttl_s": ttl_s}
        return attempt(lambda: {"message": ctx.api.message_send(**message)}, lambda d: render.message(d["message"]))


def _message_list(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_message_list", annotations=read_only("List messages"), description=(
        "List messages sent to a project, oldest first, optionally by state. Listing does not deliver them: use "
        "memory_message_pop to take the open ones, or the id with memory_message_cancel to withdraw one."))
    def memory_message_list(
        project: ListProject = None,
        all_projects: AllProjects = False,
        state: Annotated[MessageState | None, Field(description="only messages in this state")] = None,
    ) -> Annotated[CallToolResult, MessageListOut]:
        scoped = None if all_projects else (project or ctx.project)
        return attempt(lambda: {"messages": ctx.api.message_list(scoped, state)}, render.messages)


def _message_pop(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_message_pop", annotations=writes("Take messages", destructive=False, idempotent=False),
                 description=(
        "Take the oldest open messages for a project and act on them. Each message is delivered to exactly one "
        "caller: once popped it is yours and will not appear in any briefing."))
    def memory_message_pop(
        project: Annotated[ProjectName | None, Field(description="default: the agent's project")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="at most this many")] = 5,
    ) -> Annotated[CallToolResult, MessageListOut]:
        def call() -> dict[str, Any]:
            return {"messages": ctx.api.message_pop(project or ctx.project, limit, ctx.session_id)}

        return attempt(call, render.messages)


def _message_cancel(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_message_cancel", annotations=writes("Cancel a message", destructive=True,
                                                                  idempotent=True), description=(
        "Withdraw an open message you sent (find its id with memory_message_list), e.g. when it no longer "
        "applies. A message already popped cannot be cancelled."))
    def memory_message_cancel(
        message_id: Annotated[RecordId, Field(description="the message's id, from memory_message_list")],
    ) -> Annotated[CallToolResult, MessageOut]:
        return attempt(lambda: {"message": ctx.api.message_cancel(message_id)}, lambda d: render.message(d["message"]))
