"""Tools that change memory pages: store a memory, correct one, delete one.

Annotations, and why:
- memory_write_page: additive (destructiveHint false). Not idempotent as a tool: a repeat is only
  harmless when the caller passes the same idempotency_key (otherwise the duplicate guard answers
  409), and a hint must hold for every call.
- memory_correct: destructiveHint false. A correction writes a *new* page; the old one keeps its
  text and only gains ``superseded_by`` and the reason, stays readable by id with its lineage, and
  returns to search with include_superseded (invariant 14). Nothing is lost, so the update is
  additive in the spec's sense even though the old version leaves default search. Not idempotent:
  a second identical call finds the page already superseded (409).
- memory_delete_page: destructive (the file leaves the wiki; only git history keeps it), and
  idempotent: deleting again changes nothing more (it answers "not found").
- memory_feedback: not destructive (it moves a bounded salience, and a later signal moves it
  back), and not idempotent: every call counts, so a repeat moves the salience again.
"""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from ai_memory.core.wire import Stored
from ai_memory.mcp import render
from ai_memory.mcp.context import ToolContext
from ai_memory.mcp.models import DeletedOut, FeedbackOut, Items, Kind, ProjectName, Ref, Scope, Signal, StoredOut
from ai_memory.mcp.outcome import attempt, writes

_TYPE_KINDS = {"Fact": "fact", "Decision": "decision", "Preference": "preference", "Episode": "episode",
               "Gotcha": "gotcha", "Procedure": "procedure", "Rule": "rule", "Concept": "concept", "Note": "note",
               "Session Summary": "episode"}

Text = Annotated[str, Field(min_length=1, max_length=100_000, description=(
    "the memory itself: one fact, decision, gotcha or procedure, in a few sentences"))]
KindArg = Annotated[Kind, Field(description=(
    "decision: a choice and its reason; gotcha: a trap and how to avoid it; procedure: steps that worked; "
    "rule: a constraint the user set; preference: how the user likes things done; fact: a stable truth about "
    "the system; concept: an explanation; episode or note otherwise"))]
Title = Annotated[str | None, Field(max_length=200, description="short title; default: the first sentence")]
Tags = Annotated[Items | None, Field(description="keywords to find it by")]
Entities = Annotated[Items | None, Field(description="identifiers it is about: files, functions, services")]


def register(server: MCPServer, ctx: ToolContext) -> None:
    for tool in (_write_page, _correct, _delete_page, _feedback):
        tool(server, ctx)


def _write_page(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_write_page", annotations=writes("Store a memory", destructive=False, idempotent=False),
                 description=(
        "Store one deliberate memory that a future session should know, in the project it is about: a decision "
        "and its reason, a gotcha, a procedure that worked, a rule or preference the user stated, a stable fact. "
        "One fact per call. Do not store secrets, whole files or what git already records. If the memory "
        "contradicts an existing one, use memory_correct instead. A 'conflict: duplicate memory' error means it "
        "is already stored: use the id it returns."))
    def memory_write_page(
        text: Text,
        kind: KindArg,
        project: Annotated[ProjectName | None, Field(description=(
            "the project it is about; default: the project of the agent's working directory"))] = None,
        scope: Annotated[Scope, Field(description=(
            "project: this project only; _global: holds in every project (e.g. user preferences); "
            "private: visible only to its owner"))] = "project",
        title: Title = None,
        tags: Tags = None,
        entities: Entities = None,
        source: Annotated[str | None, Field(max_length=500, description="where it comes from: a URL, PR, file")]
        = None,
        expires_at: Annotated[str | None, Field(max_length=40, description=(
            "ISO date or timestamp after which it leaves search (temporary facts)"))] = None,
        idempotency_key: Annotated[str | None, Field(max_length=200, description=(
            "any unique string; a retry with the same key returns the first write instead of a duplicate"))] = None,
    ) -> Annotated[CallToolResult, StoredOut]:
        memory = {"text": text, "kind": kind, "project": project or ctx.project, "scope": scope, "title": title,
                  "tags": tags, "entities": entities, "source": source, "expires_at": expires_at,
                  "idempotency_key": idempotency_key}
        return attempt(lambda: ctx.api.write(**memory), render.stored)


def _correct(server: MCPServer, ctx: ToolContext) -> None:
    # destructiveHint false: see the module docstring.
    @server.tool(name="memory_correct", annotations=writes("Correct a memory", destructive=False, idempotent=False),
                 description=(
        "Correct a stored memory that turned out wrong or outdated: give its id (or path), the new text and the "
        "reason. The correction becomes the current version; the old one keeps its history but leaves search. "
        "Use this instead of writing a second memory that contradicts the first. Kind, project, scope, tags and "
        "entities are kept from the old memory unless you pass new ones."))
    def memory_correct(
        ref: Ref,
        text: Text,
        reason: Annotated[str, Field(min_length=1, max_length=2000, description="why the old version is wrong")],
        kind: Annotated[Kind | None, Field(description="new kind; default: the old memory's")] = None,
        project: Annotated[ProjectName | None, Field(description="new project; default: the old memory's")] = None,
        title: Title = None,
        tags: Tags = None,
        entities: Entities = None,
    ) -> Annotated[CallToolResult, StoredOut]:
        given = {"kind": kind, "project": project, "title": title, "tags": tags, "entities": entities}
        return attempt(lambda: _supersede(ctx, ref, text, reason, given), render.stored)


def _supersede(ctx: ToolContext, ref: str, text: str, reason: str, given: dict[str, Any]) -> Stored:
    """POST /v1/pages with supersedes, carrying over what the caller did not restate."""
    old = ctx.api.read_page(ref)
    fm = old.get("frontmatter") or {}
    kind = given["kind"] or fm.get("kind") or _TYPE_KINDS.get(str(old.get("type")), "note")
    scope = fm.get("scope") or old.get("scope") or "project"
    home = str(old.get("project") or "")
    # A _global memory lives under _global/ but belongs to the project it came from.
    project = given["project"] or fm.get("origin_project") or (ctx.project if home == "_global" else home)
    memory = {"text": text, "kind": kind, "project": project, "scope": scope,
              "supersedes": old.get("uid") or old["path"], "supersede_reason": reason, "title": given["title"],
              "tags": given["tags"] if given["tags"] is not None else _strings(fm.get("tags")),
              "entities": given["entities"] if given["entities"] is not None else _strings(fm.get("entities"))}
    return ctx.api.write(**memory)


def _strings(value: object) -> list[str] | None:
    """A frontmatter list carried over, if it is one (pages are also edited by hand)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def _delete_page(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_delete_page", annotations=writes("Delete a memory page", destructive=True,
                                                               idempotent=True), description=(
        "Delete a memory page: only for a mistake or a leaked secret, and only when the user asks or agrees. "
        "To fix wrong content use memory_correct instead, which keeps the history. The page leaves the wiki and "
        "the index; git history still holds it."))
    def memory_delete_page(ref: Ref) -> Annotated[CallToolResult, DeletedOut]:
        return attempt(lambda: ctx.api.delete_page(ref), render.deleted)


def _feedback(server: MCPServer, ctx: ToolContext) -> None:
    @server.tool(name="memory_feedback", annotations=writes("Rate a memory", destructive=False, idempotent=False),
                 description=(
        "Say whether a memory you used was worth it, once per memory per task: helpful when it helped, "
        "not_helpful when it was beside the point, stale when it is out of date, wrong when it misled you. "
        "Helpful memories rank higher in search and are kept longer; the others rank lower and old session "
        "notes among them are forgotten sooner. To fix wrong content, also use memory_correct."))
    def memory_feedback(
        ref: Ref,
        signal: Annotated[Signal, Field(description="helpful, not_helpful, stale or wrong")],
    ) -> Annotated[CallToolResult, FeedbackOut]:
        return attempt(lambda: ctx.api.feedback(ref, signal), render.feedback)
