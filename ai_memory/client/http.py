"""A small standard-library HTTP client for the daemon's JSON API (CLI, hooks, MCP bridge)."""

from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ai_memory.core.errors import DaemonUnavailable


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class DaemonClient:
    """Talks JSON to the daemon at ``url`` with the bearer token; one connection per call."""

    def __init__(self, url: str, token: str | None, timeout_s: float = 10.0) -> None:
        parts = urlsplit(url)
        self.url = url
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._token = token
        self._timeout = timeout_s

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> Reply:
        """Send one request; DaemonUnavailable when the daemon cannot be reached in time."""
        conn_cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = conn_cls(self._host, self._port, timeout=self._timeout)
        all_headers = {"Accept": "application/json", **(headers or {})}
        if self._token:
            all_headers["Authorization"] = f"Bearer {self._token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        try:
            conn.request(method, self._prefix + path, body=data, headers=all_headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, socket.timeout, http.client.HTTPException) as exc:
            raise DaemonUnavailable(f"ai-memory daemon not reachable at {self.url}", detail=str(exc)) from exc
        finally:
            conn.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        return Reply(status=response.status, body=parsed)

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> Reply:
        return self.request("POST", path, body, headers)
