"""Asking an MCP server over Streamable HTTP which tools it offers, the two calls an agent makes
first (``initialize``, ``tools/list``), with the headers the agent was given.

``install-mcp --transport http`` makes them once it has written the settings: the user learns
at once whether the URL and token work, not from an agent that silently has no tools, and the
daemon loads its tools then rather than during the agent's first, time-limited connect.
Standard library only (the CLI must start fast): JSON-RPC over the daemon's JSON client.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ai_memory.client.http import DaemonClient, Reply
from ai_memory.core.errors import AuthError, ResponseIncomplete

PROTOCOL_VERSION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"


def offered_tools(url: str, headers: dict[str, str], timeout_s: float = 30.0) -> list[str]:
    """The names of the tools the server at ``url`` lists. ConnectFailed when nothing answers,
    AuthError when the token is refused, ResponseIncomplete for any answer that is not MCP."""
    parts = urlsplit(url)
    client = DaemonClient(f"{parts.scheme}://{parts.netloc}", None, timeout_s)
    path = parts.path or "/"
    sent = {**headers, "Accept": ACCEPT}
    hello = _call(client, path, sent, 1, "initialize", {
        "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "ai-memory install-mcp", "version": "1"}})
    version = str(hello.get("protocolVersion") or PROTOCOL_VERSION)
    listed = _call(client, path, {**sent, "Mcp-Protocol-Version": version}, 2, "tools/list", {})
    tools = listed.get("tools")
    if not isinstance(tools, list):
        raise ResponseIncomplete(f"{url} answered tools/list without a list of tools")
    return [str(tool.get("name")) for tool in tools if isinstance(tool, dict)]


def _call(client: DaemonClient, path: str, headers: dict[str, str], ident: int, method: str,
          params: dict[str, Any]) -> dict[str, Any]:
    reply = client.post(path, {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}, headers)
    if reply.status in (401, 403):
        raise AuthError(f"{client.url}{path} refused the token ({reply.status})", detail=_reason(reply))
    body = reply.body if isinstance(reply.body, dict) else {}
    if not reply.ok or not isinstance(body.get("result"), dict):
        raise ResponseIncomplete(f"{client.url}{path} did not answer {method} as an MCP server ({reply.status})",
                                 detail=_reason(reply))
    return body["result"]


def _reason(reply: Reply) -> str:
    body = reply.body
    if isinstance(body, dict):
        error = body.get("error")
        return str(error.get("message") if isinstance(error, dict) else body.get("reason") or error or body)[:300]
    return str(body)[:300]
