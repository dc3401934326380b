"""Issue 39, item 11: behind a TLS proxy (the README's team setup) the web view works. The
daemon sees http and the proxy's Host while the browser is on https://memory.example.test/memory:
with ``server.public_url`` set to that, the forms are its own origin (they answered 403), and
the session cookie is ``Secure``, named ``__Secure-aim_ui``, scoped to ``/memory/ui``.

The proxy is real: an aiohttp server speaking TLS (a self-signed certificate made by openssl)
that strips the prefix and forwards to the daemon, keeping the browser's Host as Caddy does."""

from __future__ import annotations

import asyncio
import http.client
import re
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import quote, urlencode

import aiohttp
import pytest
from aiohttp import web

from conftest import Daemon, free_port, run_cli
from test_team import add_user, ok

PUBLIC = "https://memory.example.test"
PREFIX = "/memory"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class TlsProxy:
    """``https://127.0.0.1:<port>/memory/...`` → ``http://127.0.0.1:<daemon>/...``, in a thread of its own."""

    def __init__(self, upstream: str, cert: Path, key: Path) -> None:
        self.upstream, self.port = upstream, free_port()
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.tls.load_cert_chain(cert, key)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "TlsProxy":
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("*", PREFIX + "/{tail:.*}", self._forward)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        self._loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port, ssl_context=self.tls).start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    async def _forward(self, request: web.Request) -> web.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        headers |= {"Host": request.host, "X-Forwarded-Proto": "https", "X-Forwarded-For": request.remote or ""}
        target = self.upstream + request.rel_url.path_qs.removeprefix(PREFIX)
        async with aiohttp.ClientSession(auto_decompress=False) as session:
            async with session.request(request.method, target, headers=headers, data=await request.read(),
                                       allow_redirects=False) as answer:
                body = await answer.read()
                back = [(k, v) for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP]
        response = web.Response(status=answer.status, body=body)
        for name, value in back:
            response.headers.add(name, value)
        return response


class HttpsBrowser:
    """A browser on the public URL: every request through the proxy, with its cookie and Origin."""

    def __init__(self, proxy: TlsProxy) -> None:
        self.proxy, self.cookie = proxy, ""
        self.tls = ssl.create_default_context()
        self.tls.check_hostname, self.tls.verify_mode = False, ssl.CERT_NONE

    def request(self, method: str, path: str, form: dict[str, str] | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, str, http.client.HTTPMessage]:
        hdrs = {"Host": PUBLIC.removeprefix("https://"), **(headers or {})}
        if self.cookie:
            hdrs["Cookie"] = self.cookie
        data = None
        if form is not None:
            data = urlencode(form).encode()
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
            hdrs.setdefault("Origin", PUBLIC)
        conn = http.client.HTTPSConnection("127.0.0.1", self.proxy.port, context=self.tls, timeout=30)
        try:
            conn.request(method, PREFIX + path, body=data, headers=hdrs)
            resp = conn.getresponse()
            return resp.status, resp.read().decode(), resp.headers
        finally:
            conn.close()


@pytest.fixture(scope="module")
def behind(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make the proxy's certificate")
    tmp = tmp_path_factory.mktemp("tls-proxy")
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=memory.example.test"], check=True, capture_output=True)
    daemon = Daemon(tmp / "data", env={"AI_MEMORY_SERVER_PUBLIC_URL": PUBLIC + PREFIX}).start()
    alice = add_user(daemon.data_dir, "alice", daemon)
    page = ok(daemon, alice, "POST", "/v1/pages", {"text": "The proxy terminates TLS.", "kind": "fact",
                                                   "project": "acme-api", "title": "Proxy fact"})
    with TlsProxy(daemon.url, cert, key) as proxy:
        yield {"daemon": daemon, "alice": alice, "page": page, "proxy": proxy}
    daemon.stop()


def _logged_in(behind: dict) -> tuple[HttpsBrowser, str]:
    """Through the proxy: a login code with alice's token, its page, the confirmation; the cookie set."""
    browser = HttpsBrowser(behind["proxy"])
    status, text, _ = browser.request("POST", "/v1/ui/login", headers={"Authorization": f"Bearer {behind['alice']}"})
    assert status == 200, text
    code = re.search(r'"code": "([^"]+)"', text).group(1)
    status, text, _ = browser.request("POST", "/ui/login", {"code": code}, headers={"Origin": "null"})
    assert status == 200 and f'action="{PREFIX}/ui/login/confirm"' in text, text[:400]
    status, text, headers = browser.request("POST", "/ui/login/confirm", {"code": code})
    assert status == 303, (status, text[:300])
    return browser, headers["Set-Cookie"]


def test_the_web_view_works_behind_a_tls_proxy(behind: dict) -> None:
    browser, set_cookie = _logged_in(behind)
    cookie = SimpleCookie(set_cookie)["__Secure-aim_ui"]
    assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Strict"
    assert cookie["path"] == f"{PREFIX}/ui" and not cookie["domain"]  # this host only, this path only
    browser.cookie = f"__Secure-aim_ui={cookie.value}"
    status, text, _ = browser.request("GET", "/ui/")
    assert status == 200 and f'href="{PREFIX}/ui/sessions"' in text and f'href="{PREFIX}/ui/static/ui.css"' in text
    rel = behind["page"]["path"]
    shown = browser.request("GET", f"/ui/page?path={quote(rel)}")[1]
    csrf = re.search(r'name="csrf" value="([^"]+)"', shown).group(1)
    status, _, headers = browser.request("POST", "/ui/feedback", {"csrf": csrf, "path": rel, "signal": "helpful"})
    assert status == 303 and headers["Location"].startswith(f"{PREFIX}/ui/page?path="), status
    status, _, headers = browser.request("POST", "/ui/logout", {"csrf": csrf})
    assert status == 303 and headers["Location"] == f"{PREFIX}/ui/login"
    assert "__Secure-aim_ui=" in headers["Set-Cookie"] and f"Path={PREFIX}/ui" in headers["Set-Cookie"]


def test_another_origin_is_refused_behind_the_proxy(behind: dict) -> None:
    browser, set_cookie = _logged_in(behind)
    browser.cookie = f"__Secure-aim_ui={SimpleCookie(set_cookie)['__Secure-aim_ui'].value}"
    rel = behind["page"]["path"]
    csrf = re.search(r'name="csrf" value="([^"]+)"', browser.request("GET", f"/ui/page?path={quote(rel)}")[1]).group(1)
    for origin in ("https://evil.example", "http://memory.example.test", "https://memory.example.test:8443"):
        status, _, _ = browser.request("POST", "/ui/feedback", {"csrf": csrf, "path": rel, "signal": "helpful"},
                                       headers={"Origin": origin})
        assert status == 403, origin
    assert browser.request("GET", "/ui/", headers={"Host": "evil.example"})[0] == 403  # DNS rebinding: still a stranger


def test_a_public_url_that_is_not_one_stops_the_start(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "data", "serve", "--port", str(free_port()), timeout=60,
                   AI_MEMORY_SERVER_PUBLIC_URL="memory.example.test")
    assert done.returncode != 0 and "server.public_url" in done.stderr, done.stderr[-500:]
