"""``ai-memory serve``: run the daemon in the foreground."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from ai_memory.cli.common import config_from, port_number

HELP = "run the daemon in the foreground (stop with Ctrl-C or SIGTERM)"
EXAMPLE = "example: ai-memory serve --port 49374 --data-dir ~/.local/share/ai-memory"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("serve", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--host", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=port_number, help="TCP port, 1-65535 (default 49374)")
    p.add_argument("--allow-remote", action="store_true", default=None,
                   help="allow a non-loopback --host (protect the token!)")
    p.set_defaults(run=run)


def mcp_over_http(url: str, data_dir: Path) -> list:
    """The MCP tools at /mcp (Streamable HTTP), as clients of the daemon at ``url``, built at the
    first call, or at start-up once they have been used with this data dir. POST only:
    stateless, the server never speaks first, so there is no GET stream to hold open (405)."""
    from ai_memory.datadir import MCP_HTTP_USED
    from ai_memory.server.asgi import AsgiMount

    def build():  # the SDK's ASGI types are starlette's, not server.asgi's
        from ai_memory.mcp.http import asgi_app, session_manager

        manager = session_manager(url)
        return asgi_app(manager), manager.run

    return [AsgiMount("/mcp", "ai_memory.mcp.http", build, used_marker=data_dir / MCP_HTTP_USED)]


def run(args: argparse.Namespace) -> int:
    from ai_memory.server.serve import serve  # heavy: aiohttp, sqlite store

    config = config_from(args, **{
        "server.host": args.host, "server.port": args.port, "server.allow_remote": args.allow_remote,
    })
    serve(config, lambda url: mcp_over_http(url, config.data_dir))
    # Everything durable is closed (writer stopped, last commit made). What may still run is a
    # thread inside the embedding model (loading it, or a batch whose vectors nobody will
    # store), which the interpreter would wait for at exit, seconds: leave without it.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
