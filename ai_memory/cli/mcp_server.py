"""``ai-memory mcp``: serve the memory tools to an agent over stdio (MCP)."""

from __future__ import annotations

import argparse
from typing import BinaryIO

HELP = "serve the memory tools to an agent over stdio (MCP; the daemon must be running)"
EXAMPLE = ("example: claude mcp add ai-memory -- ai-memory mcp\n"
           "         (hosts launch it; it speaks JSON-RPC on stdin/stdout and logs to stderr)")


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("mcp", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # The handshake is answered first; the SDK (pydantic, anyio) loads behind it (see fast_start).
    from ai_memory.mcp.fast_start import serve_fast

    def load(sdk_in: BinaryIO, sdk_out: BinaryIO) -> int:
        import os
        from pathlib import Path

        from ai_memory.cli.common import config_from, settings_from
        from ai_memory.client.offline import open_api
        from ai_memory.mcp.context import ToolContext, default_workdir
        from ai_memory.mcp.server import serve

        api = open_api(settings_from(config_from(args)))  # resilient (outbox, fallback) for a remote daemon
        workdir = default_workdir(os.environ, Path.cwd())  # $CLAUDE_PROJECT_DIR, set by Claude Code for MCP servers
        return serve(ToolContext.for_dir(api, workdir), sdk_in, sdk_out)

    return serve_fast(load)
