"""A small standard-library HTTP client for the daemon's JSON API (CLI, hooks, MCP bridge).

Two budgets, because a VPN path needs seconds to connect while a big answer needs longer to
stream: ``connect_timeout_s`` covers the TCP connect and the wait for the response headers,
``timeout_s`` the body, as a deadline over the whole read (a body that trickles a byte every
second must still end). Failures are typed for the circuit breaker:

- ``ConnectFailed``: refused, unknown host, connect timeout. The request never left.
- ``ResponseIncomplete``: sent, but the headers or the body did not arrive in time, the
  connection broke mid-answer, or a 2xx body is not the JSON it promised. Never an empty answer.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ai_memory.core.errors import ConnectFailed, ResponseIncomplete

READ_CHUNK = 65536


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class DaemonClient:
    """Talks JSON to the daemon at ``url`` with the bearer token; one connection per call."""

    def __init__(self, url: str, token: str | None, timeout_s: float = 10.0,
                 connect_timeout_s: float | None = None) -> None:
        parts = urlsplit(url)
        self.url = url
        self._https = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._token = token
        self._timeout = timeout_s
        self._connect_timeout = timeout_s if connect_timeout_s is None else connect_timeout_s

    def request(self, method: str, path: str, body: Any = None,
                headers: dict[str, str] | None = None) -> Reply:
        """Send one request; ConnectFailed or ResponseIncomplete when it cannot complete in time."""
        conn = self._connect()
        try:
            sock = conn.sock  # kept: http.client drops conn.sock once the response owns the connection
            response = self._send(conn, sock, method, path, body, headers)
            raw = self._read_body(sock, response)
        finally:
            conn.close()
        reply_headers = {k.lower(): v for k, v in response.getheaders()}
        return Reply(status=response.status, body=_decode(raw, response.status), headers=reply_headers)

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, body: Any, headers: dict[str, str] | None = None) -> Reply:
        return self.request("POST", path, body, headers)

    def _connect(self) -> http.client.HTTPConnection:
        conn_cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = conn_cls(self.host, self._port, timeout=self._connect_timeout)
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise ConnectFailed(f"ai-memory daemon not reachable at {self.url}", detail=_why(exc)) from exc
        return conn

    def _send(self, conn: http.client.HTTPConnection, sock: socket.socket, method: str, path: str,
              body: Any, headers: dict[str, str] | None) -> http.client.HTTPResponse:
        all_headers = {"Accept": "application/json", **(headers or {})}
        if self._token:
            all_headers["Authorization"] = f"Bearer {self._token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        started = time.monotonic()
        try:
            conn.request(method, self._prefix + path, body=data, headers=all_headers)
            # The header wait shares the connect budget (the whole "is anyone there" question).
            sock.settimeout(max(0.001, self._connect_timeout - (time.monotonic() - started)))
            return conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            raise ResponseIncomplete(f"ai-memory daemon at {self.url} sent no answer in time",
                                     detail=_why(exc)) from exc

    def _read_body(self, sock: socket.socket, response: http.client.HTTPResponse) -> bytes:
        """Read the body against one deadline; a short or stalled body raises, never returns partial."""
        status = response.status
        deadline = time.monotonic() + self._timeout
        chunks: list[bytes] = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout(f"body not finished within {self._timeout:g} s")
                sock.settimeout(left)
                chunk = response.read1(READ_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
        except (OSError, http.client.HTTPException) as exc:
            raise ResponseIncomplete(f"ai-memory daemon at {self.url} did not finish its answer ({status})",
                                     detail=_why(exc)) from exc
        if response.length:  # Content-Length promised more than arrived before the close
            raise ResponseIncomplete(f"ai-memory daemon at {self.url} did not finish its answer ({status})",
                                     detail=f"{response.length} bytes missing")
        return b"".join(chunks)


def _decode(raw: bytes, status: int) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        if 200 <= status < 300:  # a success must be the JSON it promised, never a guess
            raise ResponseIncomplete("the daemon's answer is not valid JSON", detail=raw[:120].decode(
                "utf-8", "replace")) from None
        return raw.decode("utf-8", "replace")


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
