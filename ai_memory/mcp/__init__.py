"""The MCP server: agent-facing tools over stdio, a thin client of the daemon's HTTP API.

``server.build_server(context)`` returns an ``MCPServer`` (the official SDK, v2) whose tools call
the daemon through ``client.api.MemoryAPI``; ``server.serve(context)`` runs it on stdio. Nothing
heavy is imported here (no model, aiohttp or store): the server starts in well under a second and
a test guards its import path. Stdout carries protocol messages only; logs go to stderr.
"""
