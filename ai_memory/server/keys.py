"""Typed application keys: the only way handlers reach shared state."""

from __future__ import annotations

from aiohttp import web

from ai_memory.runtime import Runtime

RUNTIME = web.AppKey("runtime", Runtime)
