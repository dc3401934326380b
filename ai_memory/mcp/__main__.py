"""``python -m ai_memory.mcp [--data-dir DIR] [--url URL]``: the MCP server without the CLI.

The same server as ``ai-memory mcp``. The layer rule keeps ``cli/`` out of reach here, so the
client is built from the config directly (what ``cli.common.client_from`` does).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import BinaryIO

from ai_memory.config import load_config
from ai_memory.core.errors import ConfigError
from ai_memory.mcp.fast_start import serve_fast


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ai_memory.mcp", description="ai-memory MCP server on stdio")
    parser.add_argument("--data-dir", help="data directory (its token authenticates to the daemon)")
    parser.add_argument("--url", help="daemon URL (default: from config)")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.data_dir, {"client.url": args.url})
    except ConfigError as exc:
        print(f"ai-memory mcp: {exc.message}", file=sys.stderr)
        return 2
    token = config.token_path.read_text().strip() if config.token_path.exists() else None

    def load(sdk_in: BinaryIO, sdk_out: BinaryIO) -> int:  # behind the handshake (see fast_start)
        from ai_memory.client.offline import open_api
        from ai_memory.client.resilient import ClientSettings
        from ai_memory.mcp.context import ToolContext, default_workdir
        from ai_memory.mcp.server import serve

        try:  # resilient (breaker, outbox, local fallback) when the daemon is on another machine
            api = open_api(ClientSettings.from_section(config.client, config.url, token, config.data_dir))
        except ConfigError as exc:
            print(f"ai-memory mcp: {exc.message}", file=sys.stderr)
            return 2
        workdir = default_workdir(os.environ, Path.cwd())  # the process edge: where the host says we work
        return serve(ToolContext.for_dir(api, workdir), sdk_in, sdk_out)

    return serve_fast(load)


if __name__ == "__main__":
    sys.exit(main())
