"""Typed application keys: the only way handlers reach shared state."""

from __future__ import annotations

from aiohttp import web

from ai_memory.core.openapi import EncodedDocument
from ai_memory.overview.dashboard import DiskUsage
from ai_memory.runtime import Runtime
from ai_memory.server.body import BODIES  # noqa: F401  (defined beside the reader it holds)
from ai_memory.server.ui.access import UiAccess
from ai_memory.server.ui.render import Views
from ai_memory.server.ui.site import UiSite

RUNTIME = web.AppKey("runtime", Runtime)
UI_ACCESS = web.AppKey("ui_access", UiAccess)
UI_VIEWS = web.AppKey("ui_views", Views)
UI_SITE = web.AppKey("ui_site", UiSite)
MOUNTS: web.AppKey[dict[str, str]] = web.AppKey("mounts", dict)  # path -> "not loaded" | "loading" | "ready" | "failed: <reason>"
API_DOCUMENT = web.AppKey("api_document", EncodedDocument)
UI_DISK = web.AppKey("ui_disk", DiskUsage)  # the status page's sizes, measured once a minute
