"""Read-only tools: search, read a page, recent activity, status, counts, the briefing, a session.

All are annotated read-only and closed-world, so hosts may run them without asking and in
parallel. ``memory_briefing`` deliberately takes no session id: with one, the daemon would claim
the handoff and messages, which is memory_handoff_accept's and memory_message_pop's job.
"""

from collections.abc import Mapping
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from ai_memory.mcp import render
from ai_memory.mcp.context import ToolContext
from ai_memory.mcp.models import (
    BriefingOut, LintOut, MetaOut, ObservationsOut, PageOut, ProjectName, QueryOut, RecentOut, Ref, Scope,
    SearchKind, StatusOut,
)
from ai_memory.mcp.outcome import attempt, read_only

OBSERVATION_CHARS = 4000

ProjectArg = Annotated[ProjectName | None, Field(
    description="project to look in; default: the project of the agent's working directory")]
AllProjects = Annotated[bool, Field(description="look in every project instead of one")]


def register(server: MCPServer, ctx: ToolContext) -> None:
    for tool in (_query, _read_page, _recent, _status, _meta, _briefing, _session_observations, _lint):
        tool(server, ctx)


def _scoped(ctx: ToolContext, project: str | None, all_projects: bool) -> str | None:
    """The project a read is limited to: None means every project."""
    return None if all_projects else (project or ctx.project)


def _query(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_query", annotations=read_only("Search memory"), description=(
        "Search long-term memory (past sessions, decisions, gotchas, procedures, preferences, facts). "
        "Use it before changing code you have not touched in this session, before debugging a failure, and "
        "whenever the user refers to earlier work ('like last time', 'what did we decide'). Ask a short question "
        "or name the identifiers involved. Searches the current project plus _global unless told otherwise; "
        "superseded and expired memories are left out. Read a hit in full with memory_read_page."))
    def memory_query(
        query: Annotated[str, Field(min_length=1, max_length=2000, description="a short question or identifiers")],
        project: ProjectArg = None,
        all_projects: AllProjects = False,
        k: Annotated[int, Field(ge=1, le=50, description="how many hits")] = 8,
        kinds: Annotated[list[SearchKind] | None, Field(description="only these kinds of page")] = None,
        scope: Annotated[Scope | None, Field(description="only memories of this scope")] = None,
        as_of: Annotated[str | None, Field(max_length=40, description=(
            "answer from what memory knew then: an ISO date (2026-05-01) or timestamp"))] = None,
        include_superseded: Annotated[bool, Field(description="also return corrected (old) versions")] = False,
    ) -> Annotated[CallToolResult, QueryOut]:
        options = {"project": project or ctx.project, "all": all_projects, "k": k, "kind": kinds, "scope": scope,
                   "as_of": as_of, "include_superseded": include_superseded}
        return attempt(lambda: ctx.api.query(query, **options), render.query)


def _read_page(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_read_page", annotations=read_only("Read a memory page"), description=(
        "Read one memory page in full (text, frontmatter, and its lineage of corrections) by memory id or wiki "
        "path, e.g. a hit from memory_query whose snippet is not enough. A page marked superseded has a newer "
        "version: read that one. With at, read the page as an earlier commit of the wiki's history left it."))
    def memory_read_page(
        ref: Ref,
        max_chars: Annotated[int, Field(ge=500, le=200_000, description="cut the body after this many characters")]
        = 20_000,
        at: Annotated[str | None, Field(pattern=r"^([0-9a-fA-F]{4,40}|HEAD(~[0-9]{1,6})?)$", description=(
            "a past version: a commit id from the page's history (ai-memory history PAGE), HEAD or HEAD~N"))]
        = None,
    ) -> Annotated[CallToolResult, PageOut]:
        def call() -> dict[str, Any]:
            page = ctx.api.read_page(ref, at=at)
            body = str(page.get("body") or "")
            return {**page, "body": body[:max_chars], "truncated": len(body) > max_chars}

        return attempt(call, render.page)


def _recent(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_recent", annotations=read_only("Recent memory"), description=(
        "List the newest memory pages and agent sessions of a project (plus _global), newest first. Use it to "
        "catch up on what happened lately before searching for something specific."))
    def memory_recent(
        project: ProjectArg = None,
        all_projects: AllProjects = False,
        limit: Annotated[int, Field(ge=1, le=100, description="how many pages and sessions")] = 10,
    ) -> Annotated[CallToolResult, RecentOut]:
        return attempt(lambda: ctx.api.recent(_scoped(ctx, project, all_projects), limit), render.recent)


def _status(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_status", annotations=read_only("Memory daemon status"), description=(
        "Check that the ai-memory daemon is running and see its version, data directory, counts, writer queue "
        "and embedding state. Use it when another memory tool fails and you want to know why."))
    def memory_status() -> Annotated[CallToolResult, StatusOut]:
        return attempt(ctx.api.status, render.status)


def _meta(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_meta", annotations=read_only("What memory holds"), description=(
        "Count what memory holds for a project (plus _global): live memories by scope and kind, superseded and "
        "expired ones, the known projects and agents. Use it to see whether a project has memories at all and "
        "which project names exist before writing or sending a message."))
    def memory_meta(project: ProjectArg = None, all_projects: AllProjects = False
                    ) -> Annotated[CallToolResult, MetaOut]:
        return attempt(lambda: ctx.api.meta(_scoped(ctx, project, all_projects)), render.meta)


def _briefing(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_briefing", annotations=read_only("Briefing for this directory"), description=(
        "Show the start-of-task briefing for a directory: recent sessions, pinned rules, decisions and gotchas. "
        "Use it at the start of a task when the SessionStart hook did not already inject it. It only reads: "
        "take a waiting handoff with memory_handoff_accept and messages with memory_message_pop."))
    def memory_briefing(
        cwd: Annotated[str | None, Field(max_length=4096, description=(
            "the directory to brief for; default: the agent's working directory"))] = None,
        agent: Annotated[str | None, Field(max_length=64, description="your agent name, e.g. claude")] = None,
    ) -> Annotated[CallToolResult, BriefingOut]:
        return attempt(lambda: ctx.api.briefing(cwd or str(ctx.workdir), agent=agent), render.briefing)


def _session_observations(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_read_session_observations", annotations=read_only("Read a session's events"),
                 description=(
        "Read what happened in one agent session, event by event (prompts, tool calls, results), in order. Use "
        "it when a session page or a search hit names a session_id and you need the exact steps or output."))
    def memory_read_session_observations(
        session_id: Annotated[str, Field(min_length=1, max_length=200, description="the session id")],
        limit: Annotated[int, Field(ge=1, le=1000, description="return at most this many, oldest first")] = 100,
        include_payload: Annotated[bool, Field(description="also return each raw hook payload (large)")] = False,
    ) -> Annotated[CallToolResult, ObservationsOut]:
        def call() -> dict[str, Any]:
            found = ctx.api.session_observations(session_id)
            rows = found["observations"]
            kept = [_observation(o, include_payload) for o in rows[:limit]]
            return {**found, "observations": kept, "total": len(rows), "truncated": len(rows) > limit}

        return attempt(call, render.observations)


def _lint(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_lint", annotations=read_only("Lint the memory wiki"), description=(
        "Check the memory wiki for defects: contradictions left unresolved, broken links, orphan pages, duplicate "
        "titles, expired pages still present, broken frontmatter, oversized pages, index drift and sync conflict "
        "copies. Each finding names the page and a concrete fix. Use it when search answers look stale or "
        "contradictory, or before tidying memory; fix contradictions with memory_correct."))
    def memory_lint(
        limit: Annotated[int, Field(ge=1, le=500, description="return at most this many findings")] = 50,
    ) -> Annotated[CallToolResult, LintOut]:
        def call() -> dict[str, Any]:
            found = ctx.api.lint()
            findings = found["findings"]
            return {**found, "findings": findings[:limit], "total": len(findings), "truncated": len(findings) > limit}

        return attempt(call, render.lint)


def _observation(row: Mapping[str, Any], include_payload: bool) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if include_payload or k != "payload"}
    body = str(out.get("body") or "")
    if len(body) > OBSERVATION_CHARS:
        out["body"], out["body_truncated"] = body[:OBSERVATION_CHARS], True
    return out
