"""``python -m ai_memory.mcp.catalog``: rewrite ``catalog.json``, the handshake the front serves.

The catalog is what the SDK server itself answers to ``initialize`` (without the negotiated
``protocolVersion``) and to the lists a host asks for right after it (``LISTS``: Claude Code
takes a server's tools only once its prompts and resources are listed too), taken from a real
session on pipes, plus the protocol versions the SDK negotiates by handshake. A test compares it with a fresh one, so a
change to a tool, its schema, the instructions or the SDK cannot go unnoticed.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from ai_memory.mcp.fast_start import CATALOG, LISTS


def _session(version: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(initialize result, {list method: result}) of one handshake session with the real server."""
    from ai_memory.client.api import MemoryAPI
    from ai_memory.client.http import DaemonClient
    from ai_memory.mcp.context import ToolContext
    from ai_memory.mcp.server import serve

    ctx = ToolContext(api=MemoryAPI(DaemonClient("http://127.0.0.1:9", None, 1.0)), workdir=Path("/"), project="p")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    worker = threading.Thread(target=serve, args=(ctx, os.fdopen(in_r, "rb"), os.fdopen(out_w, "wb")), daemon=True)
    worker.start()
    with os.fdopen(in_w, "wb") as to_server, os.fdopen(out_r, "rb") as from_server:
        def ask(message: dict[str, Any]) -> dict[str, Any]:
            to_server.write(json.dumps(message).encode() + b"\n")
            to_server.flush()
            return json.loads(from_server.readline())

        init = ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "catalog", "version": "1"}}})
        to_server.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        lists = {method: ask({"jsonrpc": "2.0", "id": n, "method": method, "params": {}})["result"]
                 for n, method in enumerate(LISTS, start=2)}
    worker.join(timeout=30)
    return init["result"], lists


def generate() -> dict[str, Any]:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    sessions = {version: _session(version) for version in HANDSHAKE_PROTOCOL_VERSIONS}
    init, lists = sessions[HANDSHAKE_PROTOCOL_VERSIONS[-1]]
    for version, (other_init, other_lists) in sessions.items():
        if other_lists != lists or {**other_init, "protocolVersion": None} != {**init, "protocolVersion": None}:
            raise RuntimeError(f"the SDK answers protocol {version} differently: the front needs a catalog per version")
    return {"handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
            "initialize": {k: v for k, v in init.items() if k != "protocolVersion"}, "lists": lists}


def render(catalog: dict[str, Any]) -> str:
    return json.dumps(catalog, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    Path(CATALOG).write_text(render(generate()), encoding="utf-8")
    print(f"wrote {CATALOG}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
