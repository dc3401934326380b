"""An MCP server that does nothing: the handshake and the lists of ai-memory's own catalog,
answered from the catalog file, and an empty result for anything else.

``benchmarks/agent_overhead.py`` installs it beside no-op hooks to measure what Claude Code
itself spends on having hooks and an MCP server at all (the floor under ai-memory's cost).
Run with ``python -S``: standard library only.
"""

import json
import sys
from pathlib import Path

CATALOG = Path(__file__).resolve().parent.parent / "ai_memory" / "mcp" / "catalog.json"


def main() -> None:
    catalog = json.loads(CATALOG.read_text())
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        method = message.get("method")
        if method == "initialize":
            result = {**catalog["initialize"], "protocolVersion": message["params"]["protocolVersion"]}
        else:
            result = catalog["lists"].get(method, {})
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
