"""Where people see the web view from: the daemon's own address, or the public URL of a TLS
proxy in front of it (``server.public_url``), and what follows from it.

Behind a proxy the daemon sees ``http`` and the proxy's Host, while the browser's pages are on
``https://memory.example.com`` (or under a path the proxy strips, ``https://example.com/memory``).
The configured URL is the truth, rather than ``X-Forwarded-*`` headers, which anyone can send
where no proxy stands in between: its origin counts as the daemon's own (forms, the login's
confirmation), its host as this daemon's, and over https the session cookie is ``Secure`` and
named ``__Secure-aim_ui`` (a plain-http service on the same host name never receives it, nor can
it set one), scoped to the view's path under the prefix (no other path of that host receives it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from ai_memory.core.errors import ConfigError

COOKIE = "aim_ui"
SECURE_COOKIE = "__Secure-aim_ui"
UI_PATH = "/ui"


@dataclass(frozen=True)
class UiSite:
    """The public origin (``None``: the daemon is reached directly) and the path prefix before ``/ui``."""

    origin: str | None = None
    prefix: str = ""

    @classmethod
    def parse(cls, public_url: str) -> "UiSite":
        """``server.public_url``: empty, or ``http(s)://host[:port][/prefix]`` (ConfigError otherwise)."""
        if not public_url:
            return cls()
        try:
            parts = urlsplit(public_url.strip())
            port = parts.port
        except ValueError as exc:
            raise ConfigError("server.public_url is not a URL", detail=str(exc)) from None
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise ConfigError("server.public_url must be http(s)://host[:port][/prefix]", detail=public_url[:200])
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return cls(f"{parts.scheme}://{host}" + (f":{port}" if port else ""), parts.path.rstrip("/"))

    @property
    def host(self) -> str | None:
        """The public host name, as the Host header names it without a port."""
        if self.origin is None:
            return None
        name = self.origin.split("://", 1)[1]
        return name.split("]")[0] + "]" if name.startswith("[") else name.split(":")[0]

    @property
    def secure(self) -> bool:
        return bool(self.origin and self.origin.startswith("https://"))

    @property
    def cookie_name(self) -> str:
        return SECURE_COOKIE if self.secure else COOKIE

    def is_own(self, origin: str, request: web.Request, direct: bool) -> bool:
        """Whether a browser's Origin is the view's: the public one, or, when the request's Host is
        one of the daemon's own addresses (``direct``), the daemon's as it is reached."""
        return origin == self.origin or (direct and origin == f"{request.scheme}://{request.host}")

    def link(self, path: str) -> str:
        """A path of the daemon (``/ui/...``) as the browser reaches it."""
        return self.prefix + path

    def cookie(self, request: web.Request) -> dict[str, Any]:
        """The session cookie's attributes (its name is ``cookie_name``)."""
        return {"path": self.prefix + UI_PATH, "httponly": True, "samesite": "Strict",
                "secure": self.secure or request.secure}
