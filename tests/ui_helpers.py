"""Helpers for the web-view tests: a browser-like HTTP client holding the session cookie."""

from __future__ import annotations

import http.client
import re
from http.cookies import SimpleCookie
from urllib.parse import urlencode

from conftest import Daemon


def login_path(daemon: Daemon, token: str) -> str:
    """What ``ai-memory ui`` asks for: a one-time login path for the token's user."""
    status, body, _ = daemon.request("POST", "/v1/ui/login", headers={"Authorization": f"Bearer {token}"})
    assert status == 200, body
    return str(body["path"])


class Browser:
    """Plain HTTP as a browser sends it: the cookie once logged in, the daemon's Origin on POSTs."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.cookie = ""
        self.set_cookie = ""

    def request(self, method: str, path: str, form: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, str, dict[str, str]]:
        hdrs = {"Host": f"127.0.0.1:{self.daemon.port}", **(headers or {})}
        if self.cookie:
            hdrs.setdefault("Cookie", self.cookie)
        data = None
        if form is not None:
            data = urlencode(form).encode()
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
            hdrs.setdefault("Origin", self.daemon.url)
        conn = http.client.HTTPConnection("127.0.0.1", self.daemon.port, timeout=30)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            text = resp.read().decode()
            got = dict(resp.getheaders())
        finally:
            conn.close()
        return resp.status, text, got

    def login(self, token: str) -> "Browser":
        return self.open_link(login_path(self.daemon, token))

    def open_link(self, path: str) -> "Browser":
        """Open a login link, then confirm on the page it shows (as a person does)."""
        status, text, _ = self.request("GET", path)
        found = re.search(r'name="code" value="([^"]+)"', text)
        assert status == 200 and found, (status, text[:300])
        status, _, headers = self.request("POST", "/ui/login/confirm", {"code": found.group(1)})
        assert status == 303 and headers["Location"] == "/ui/", (status, headers)
        self.set_cookie = headers["Set-Cookie"]
        cookie = SimpleCookie(self.set_cookie)
        self.cookie = f"aim_ui={cookie['aim_ui'].value}"
        return self

    def get(self, path: str) -> str:
        status, text, _ = self.request("GET", path)
        assert status == 200, (path, status, text[:500])
        return text

    def csrf(self, path: str = "/ui/") -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', self.get(path))
        assert found, "no CSRF token in the page"
        return found.group(1)
