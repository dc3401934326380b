"""Build and run the ai-memory MCP server (official SDK v2, ``MCPServer``) on stdio.

Tools are registered explicitly, in ``TOOL_NAMES`` order, which is the order hosts list them in
(deterministic, as MCP 2026-07-28 asks). The server's instructions are the same guidance that
``install-rules`` writes into CLAUDE.md / AGENTS.md / GEMINI.md.
"""

from __future__ import annotations

import logging
import sys
from io import TextIOWrapper
from typing import Any, BinaryIO

import anyio

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import Tool
from pydantic import ValidationError

import ai_memory
from ai_memory.core.guidance import GUIDANCE
from ai_memory.core.own_tools import SERVER_NAME
from ai_memory.mcp import tools_coordination, tools_read, tools_write
from ai_memory.mcp.context import ToolContext


log = logging.getLogger(__name__)


class MemoryServer(MCPServer):
    """``MCPServer`` with strict arguments: an unknown argument name is an input error (a model that
    misspells ``project`` must not silently search the default one), and validation errors are
    one readable line per field instead of pydantic's report."""

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [t.model_copy(update={"input_schema": {**t.input_schema, "additionalProperties": False}})
                for t in tools]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = {t.name: t.input_schema.get("properties", {}) for t in await super().list_tools()}
        # An unknown tool name passes through: the SDK answers it ("Unknown tool: ...").
        unknown = sorted(set(arguments) - set(known.get(name, arguments)))
        if unknown:
            raise ToolError(f"invalid input: unknown argument {', '.join(unknown)}; "
                            f"{name} takes {', '.join(known[name]) or 'no arguments'}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError("invalid input: " + _problems(exc.__cause__)) from exc.__cause__


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors())


def build_server(ctx: ToolContext) -> MCPServer:
    # log_level WARNING: the SDK logs every handled request at INFO, which only fills the
    # host's stderr capture; its handler writes to stderr, never stdout.
    server = MemoryServer(name=SERVER_NAME, title=SERVER_NAME, version=ai_memory.__version__,
                          instructions=GUIDANCE, log_level="WARNING")
    for module in (tools_read, tools_write, tools_coordination):
        module.register(server, ctx)
    return server


def serve(ctx: ToolContext, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve one session on these streams (the front's pipes, see ``fast_start``) until the
    input ends; 0 on a clean end."""
    from mcp.server.stdio import stdio_server

    server = build_server(ctx)
    log.info("ai-memory MCP server for project %s, daemon at %s", ctx.project, ctx.api.url)

    async def session() -> None:
        reader = anyio.wrap_file(TextIOWrapper(stdin, encoding="utf-8", errors="replace"))
        writer = anyio.wrap_file(TextIOWrapper(stdout, encoding="utf-8"))
        async with stdio_server(reader, writer) as (read_stream, write_stream):
            # What MCPServer.run("stdio") does, on our streams instead of fds 0 and 1.
            lowlevel = server._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    try:
        anyio.run(session)
    except KeyboardInterrupt:  # the host stopped us: not an error worth a traceback
        pass
    sys.stderr.flush()
    return 0
