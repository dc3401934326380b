"""Issue 39, item 3: the web view's one-time login code is in no process's command line or
environment (``ai-memory ui`` handed ``…/ui/login?code=…`` to the browser launcher, where another
local process read it in /proc and logged in first), and a login link or page someone else sends
cannot log a browser into their session (login CSRF)."""

from __future__ import annotations

import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlencode, urlparse

import pytest

from conftest import REPO, Daemon, cli_env
from proc_scan import ProcRecorder
from test_team import add_user
from ui_helpers import Browser, login_path
from wiki_helpers import wait_until

CODE = re.compile(r'name="code" value="([^"]+)"')


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, str, str]]:
    daemon = Daemon(tmp_path_factory.mktemp("ui-login") / "data").start()
    yield daemon, add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "mallory", daemon)
    daemon.stop()


def _fake_browser(tmp_path: Path) -> tuple[Path, Path]:
    """A browser command that writes down what it was handed, and stays up a second as a browser does."""
    record, fake = tmp_path / "browser-got.txt", tmp_path / "fake-browser"
    fake.write_text(f"#!{sys.executable}\nimport pathlib, sys, time\n"
                    f"pathlib.Path({str(record)!r}).write_text(sys.argv[1])\ntime.sleep(1.0)\n")
    fake.chmod(0o700)
    return fake, record


def test_ai_memory_ui_puts_the_code_in_no_command_line_or_environment(served: tuple[Daemon, str, str],
                                                                       tmp_path: Path) -> None:
    daemon = served[0]
    fake, record = _fake_browser(tmp_path)
    with ProcRecorder() as seen:
        ui = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "ui"], cwd=REPO, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=cli_env(daemon.data_dir, BROWSER=str(fake), AI_MEMORY_URL=daemon.url))
        wait_until(lambda: record.exists() and record.read_text(), timeout=30)
        handed = urlparse(record.read_text())
        page = Path(unquote(handed.path))
        found = parse_qs(handed.query).get("code") or CODE.findall(page.read_text())
        code = found[0]
        wait_until(lambda: seen.holding(str(fake)), timeout=10)  # the scanner has read the launcher's command line
        assert not seen.holding(code), seen.holding(code)
        # what the browser does with the page: its form, then the confirmation on the daemon's page
        browser = Browser(daemon)
        status, text, _ = browser.request("POST", "/ui/login", {"code": code}, headers={"Origin": "null"})
        assert status == 200 and 'id="login-user">local<' in text, text[:300]
        status, _, headers = browser.request("POST", "/ui/login/confirm", {"code": code})
        assert status == 303 and "aim_ui=" in headers["Set-Cookie"]
        out, err = ui.communicate(timeout=30)
    assert seen.scans > 10
    assert not seen.holding(code), seen.holding(code)
    assert handed.scheme == "file" and code not in record.read_text() and code not in out + err
    assert ui.returncode == 0 and "logged in" in err, err
    assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
    assert not page.exists()  # removed once used


def test_the_login_page_is_private_and_removed_when_the_code_expires(served: tuple[Daemon, str, str]) -> None:
    from ai_memory.client.login_page import write_login_page

    daemon = served[0]
    page = write_login_page(daemon.data_dir, daemon.url + "/ui/login", "a-code")
    assert stat.S_IMODE(page.stat().st_mode) == 0o600 and 'value="a-code"' in page.read_text()
    page.unlink()


def test_a_login_link_or_page_someone_sends_logs_nobody_in(served: tuple[Daemon, str, str]) -> None:
    daemon, _, mallory = served
    link = login_path(daemon, mallory)  # mallory's own code, sent to alice as a link or a page
    code = parse_qs(urlparse(link).query)["code"][0]
    victim = Browser(daemon)
    status, text, headers = victim.request("GET", link)
    assert "Set-Cookie" not in headers and status == 200 and 'id="login-user">mallory<' in text
    status, _, headers = victim.request("POST", "/ui/login", {"code": code}, headers={"Origin": "null"})
    assert "Set-Cookie" not in headers and status == 200
    for origin in ("null", "http://evil.example"):  # the confirmation, posted from anywhere but the daemon's page
        status, _, headers = victim.request("POST", "/ui/login/confirm", {"code": code}, headers={"Origin": origin})
        assert status == 403 and "Set-Cookie" not in headers, origin
    status, _, headers = daemon.request("POST", "/ui/login/confirm", raw=urlencode({"code": code}).encode(), auth=False,
                                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 403 and "Set-Cookie" not in headers  # no Origin at all: not the daemon's page either
    status, _, headers = victim.request("POST", "/ui/feedback", {"code": code}, headers={"Origin": "null"})
    assert status == 403  # null is let through to the login's first page only
    assert victim.request("GET", "/ui/")[0] == 303  # still logged out
    # the code itself still works where its owner confirms it on the daemon's page
    status, _, headers = Browser(daemon).request("POST", "/ui/login/confirm", {"code": code})
    assert status == 303 and "aim_ui=" in headers["Set-Cookie"]
