"""The web view in a real headless Chromium (Debian's, driven by Playwright; nothing is
downloaded): log in through the one-time link, search, open a hit, unfold explain, read the
history, give feedback, pin, and two team users seeing different things; then every page at
desktop (1280 px) and phone (390 px) width and in dark mode, checked for what a person would
notice (sideways scrolling, raw timestamps, Python's spelling of values). A screenshot of each
page goes to a temp dir (``ai-memory-ui-screenshots-*``), printed at the end of the module."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlparse

import pytest

from conftest import REPO, Daemon, cli_env
from test_team import add_user, ok
from test_wiki_sessions import drive_session
from ui_helpers import login_path
from wiki_helpers import wait_until

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# The flags a root, offline machine needs (no sandbox; no calls home that the closed network refuses).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def _playwright() -> Any:
    required = os.environ.get("AI_MEMORY_REQUIRE_BROWSER") == "1"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if required:
            raise
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        if required:
            raise AssertionError(f"no Chromium at {CHROMIUM}: apt-get install chromium")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    return sync_playwright


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, claude_fixtures: dict) -> Iterator[dict]:
    sync_playwright = _playwright()
    # outside pytest's basetemp, which a later run (anyone's) rotates away before a person looks
    shots = Path(tempfile.mkdtemp(prefix="ai-memory-ui-screenshots-"))
    daemon = Daemon(tmp_path_factory.mktemp("ui-browser") / "data").start()
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    team = ok(daemon, alice, "POST", "/v1/pages", {
        "text": "Token rotation runs nightly through [[rotation runbook]].\n\n```python\ndef rotate(key: str) -> str:\n"
                "    return key[::-1]\n```", "kind": "decision", "project": "acme-api", "title": "Token rotation schedule"})
    ok(daemon, alice, "POST", "/v1/pages", {"text": "Alice's rotation notebook hides under the desk.", "kind": "fact",
                                            "project": "acme-api", "scope": "private", "title": "Alice rotation notebook"})
    file = daemon.data_dir / "wiki" / team["path"]
    file.write_text(file.read_text().replace("runs nightly", "runs every six hours"))
    db = daemon.data_dir / "db" / "memory.sqlite"
    wait_until(lambda: sqlite3.connect(db).execute(
        "SELECT COUNT(*) FROM page_history WHERE path = ?", (team["path"],)).fetchone()[0] >= 2, timeout=20)
    drive_session(daemon, claude_fixtures, session_id="ui-session-1")
    wait_until(lambda: sqlite3.connect(db).execute(
        "SELECT page_path FROM sessions WHERE id = 'ui-session-1'").fetchone()[0], timeout=20)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield {"daemon": daemon, "alice": alice, "bob": bob, "team": team, "browser": browser, "shots": shots}
        browser.close()
    daemon.stop()
    print(f"\nweb view screenshots: {shots}")


def _login(world: dict, token: str, **context: Any) -> Any:
    """A new browser context opening a login link, and confirming on the page it shows."""
    page = world["browser"].new_context(viewport={"width": 1280, "height": 900}, **context).new_page()
    page.goto(world["daemon"].url + login_path(world["daemon"], token))
    page.click("#login-confirm button")
    assert page.url == world["daemon"].url + "/ui/"
    return page


def _shot(world: dict, page: Any, name: str) -> None:
    page.screenshot(path=str(world["shots"] / f"{name}.png"), full_page=True)


def test_ai_memory_ui_logs_in_through_its_local_page(world: dict, tmp_path: Path) -> None:
    """The real verb, with a browser command that writes down what it is handed: a file:// page
    (no code in any command line), which Chromium then opens, posts and confirms."""
    daemon = world["daemon"]
    record, fake = tmp_path / "browser-got.txt", tmp_path / "fake-browser"
    fake.write_text(f"#!{sys.executable}\nimport pathlib, sys\npathlib.Path({str(record)!r}).write_text(sys.argv[1])\n")
    fake.chmod(0o700)
    ui = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "ui"], cwd=REPO, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=cli_env(daemon.data_dir, BROWSER=str(fake), AI_MEMORY_URL=daemon.url))
    wait_until(lambda: record.exists() and record.read_text(), timeout=30)
    handed = record.read_text()
    assert handed.startswith("file://") and "code" not in handed
    page = world["browser"].new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(handed)
    assert page.locator("#login-user").inner_text() == "local"  # the form posted itself, at once
    _shot(world, page, "00-login-confirm")
    page.click("#login-confirm button")
    assert page.url == daemon.url + "/ui/" and page.locator("#user").inner_text() == "local"
    _, err = ui.communicate(timeout=30)
    assert ui.returncode == 0 and "logged in" in err, err
    assert not Path(unquote(urlparse(handed).path)).exists()


def test_search_open_explain_history_feedback_and_pin(world: dict) -> None:
    page = _login(world, world["alice"])
    cookie = next(c for c in page.context.cookies() if c["name"] == "aim_ui")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    _shot(world, page, "01-home")
    page.fill("input[name=q]", "token rotation")
    page.click("form.search button[type=submit]")
    hit = page.locator("li.hit", has_text="Token rotation schedule").first
    assert hit.is_visible()
    hit.locator("details.explain summary").click()
    features = hit.locator("table.features")
    assert features.is_visible() and features.locator("tr").count() > 3
    assert "authority * sum(weight * feature)" in hit.locator("p.formula").inner_text()
    _shot(world, page, "02-search-explain")
    hit.locator("a.hit-title").click()
    assert page.locator("#page-title").inner_text() == "Token rotation schedule"
    assert page.locator("pre.highlight").count() == 1 and page.locator("pre.highlight span").count() > 3
    assert "runs every six hours" in page.locator("div.body").inner_text()
    _shot(world, page, "03-page")
    page.click("#history-link")
    assert page.locator("li.version").count() >= 2
    assert "runs every six hours" in page.locator("pre.diff .add").first.inner_text()
    assert "runs nightly" in page.locator("pre.diff .del").first.inner_text()
    _shot(world, page, "04-history")
    page.go_back()
    page.click("form.feedback button[value=helpful]")
    assert "helpful: salience 1.00 → 1.25" in page.locator("p.done").inner_text()
    page.click("form.pin button")
    assert page.locator("p.done").inner_text() == "pinned" and page.locator("form.pin button").inner_text() == "Unpin"
    _shot(world, page, "05-feedback-pinned")


def test_sessions_handoffs_and_live_status(world: dict) -> None:
    page = _login(world, world["alice"])
    page.goto(world["daemon"].url + "/ui/sessions")
    entry = page.locator(".timeline li", has_text="observations").first
    assert entry.is_visible() and "claude" in entry.inner_text()
    _shot(world, page, "06-sessions")
    entry.locator("a", has_text="observations").click()
    page.locator("ol.observations li").nth(4).wait_for()  # the session's page loads after the click
    assert page.locator("ol.observations li").count() >= 5
    _shot(world, page, "07-session")
    daemon, alice = world["daemon"], world["alice"]
    ok(daemon, alice, "POST", "/v1/handoffs", {"summary": "finish the rotation job", "project": "acme-api",
                                               "to_agent": "codex"})
    ok(daemon, alice, "POST", "/v1/messages", {"to_project": "web-frontend", "from_project": "acme-api",
                                               "body": "the token TTL is now six hours"})
    page.goto(daemon.url + "/ui/handoffs")
    row = page.locator("#handoffs tr", has_text="finish the rotation job")
    assert "open" in row.inner_text() and "codex" in row.inner_text()
    assert "the token TTL is now six hours" in page.locator("#messages").inner_text()
    _shot(world, page, "08-handoffs")
    row.locator("button", has_text="Cancel").click()
    assert "cancelled" in page.locator("p.done").inner_text()
    assert page.locator("#handoffs tr", has_text="finish the rotation job").locator("td").first.inner_text() == "cancelled"
    page.goto(world["daemon"].url + "/ui/status")
    page.locator("#status[data-refreshed]").wait_for(state="attached", timeout=10_000)  # the script swapped it in
    assert int(page.locator("#count-pages").inner_text()) >= 3 and "claude" in page.locator("#agents").inner_text()
    assert "ai-memory backup" in page.locator("#backup").inner_text()
    _shot(world, page, "09-status")


def test_two_team_users_see_what_their_tokens_may_see(world: dict) -> None:
    alice, bob = _login(world, world["alice"]), _login(world, world["bob"])
    for page in (alice, bob):
        page.goto(world["daemon"].url + "/ui/?q=rotation+notebook")
    assert alice.locator("li.hit", has_text="Alice rotation notebook").count() == 1
    assert bob.locator("li.hit", has_text="Alice rotation notebook").count() == 0
    assert bob.locator("#user").inner_text() == "bob"
    _shot(world, bob, "10-bob-search")


def test_reading_works_without_javascript(world: dict) -> None:
    page = _login(world, world["bob"], java_script_enabled=False)
    page.goto(world["daemon"].url + "/ui/?q=token+rotation")
    hit = page.locator("li.hit", has_text="Token rotation schedule").first
    assert hit.locator("time").first.inner_text().endswith(" UTC")  # without script, times read in UTC
    hit.locator("details.explain summary").click()  # <details> opens without script
    assert hit.locator("table.features").is_visible()
    hit.locator("a.hit-title").click()
    assert page.locator("#page-title").inner_text() == "Token rotation schedule"
    _shot(world, page, "11-no-javascript")


DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
RAW_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")  # a stored moment shown as it is stored
REPR = re.compile(r"None|False|True|\{'|\[\]")  # Python's spelling of a value, shown to a person


def _every_page(world: dict) -> dict[str, str]:
    """Each kind of page the view has, by the name of its screenshot."""
    team = quote(world["team"]["path"])
    return {"status": "/ui/status", "search": "/ui/?q=token+rotation", "page": f"/ui/page?path={team}",
            "session": "/ui/session?id=ui-session-1", "sessions": "/ui/sessions", "handoffs": "/ui/handoffs",
            "history": f"/ui/history?path={team}", "error": "/ui/page?path=acme-api/decisions/nothing-here.md"}


def _logged_in(world: dict, viewport: dict, **context: Any) -> Any:
    page = world["browser"].new_context(viewport=viewport, **context).new_page()
    page.goto(world["daemon"].url + login_path(world["daemon"], world["alice"]))
    page.click("#login-confirm button")
    return page


def _fits(page: Any) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_every_page_reads_well_at_desktop_and_phone_width(world: dict, width: str) -> None:
    """Each page at 1280 and 390 px: no horizontal scroll, times localized, no Python spelling."""
    viewport = DESKTOP if width == "desktop" else PHONE
    fresh = world["browser"].new_context(viewport=viewport).new_page()
    fresh.goto(world["daemon"].url + login_path(world["daemon"], world["alice"]))
    assert fresh.locator("#login-user").inner_text() == "alice" and _fits(fresh)
    family = fresh.evaluate("getComputedStyle(document.body).fontFamily")
    assert "system-ui" in family and "Times" not in family  # the view's stylesheet, not the default serif
    assert fresh.locator(".login-card").evaluate("e => getComputedStyle(e).borderTopLeftRadius") != "0px"
    _shot(world, fresh, f"20-login-{width}")
    page = _logged_in(world, viewport)
    for name, path in _every_page(world).items():
        page.goto(world["daemon"].url + path)
        if page.locator("time").count():  # the script has put them in local time
            page.locator("time[data-local]").first.wait_for(state="attached", timeout=5000)
        text = page.locator("main").inner_text()
        assert _fits(page), f"{name} scrolls sideways at {viewport['width']} px"
        assert not RAW_STAMP.search(text), f"{name} shows a raw timestamp: {RAW_STAMP.search(text)}"
        _shot(world, page, f"2{list(_every_page(world)).index(name) + 1}-{name}-{width}")
    page.goto(world["daemon"].url + "/ui/status")
    assert not REPR.search(page.locator("#status").inner_text()), page.locator("#status").inner_text()


def test_status_reads_as_a_dashboard(world: dict) -> None:
    page = _logged_in(world, DESKTOP)
    page.goto(world["daemon"].url + "/ui/status")
    shown = page.locator("#status").inner_text()
    assert not REPR.search(shown), shown
    assert re.search(r"\d+(\.\d)? (B|KB|MB)", page.locator("#disk").inner_text())  # sizes with units
    assert re.search(r"last commit (just now|\d+ min ago)", shown), shown  # a relative time
    assert "sync" in shown.lower() and "backlog" in shown.lower() and "active" in page.locator("#agents").inner_text()
    page.locator("#status[data-refreshed]").wait_for(state="attached", timeout=10_000)
    assert page.locator("#status time[data-local]").count() >= 2  # the swapped-in fragment is localized too


def test_hits_show_the_lines_that_answer_with_their_time(world: dict) -> None:
    page = _logged_in(world, DESKTOP)
    page.goto(world["daemon"].url + "/ui/?q=token+rotation")
    session_hit = page.locator("li.hit", has_text="Why does the login test fail").first
    answers = session_hit.locator("li.answer")
    assert answers.count() >= 1 and "Raised TOKEN_TTL to 15 minutes" in session_hit.inner_text()
    assert "replied" in answers.first.inner_text().lower()  # what the line was, before its words
    assert "tool: Bash" not in session_hit.inner_text() and "description:" not in session_hit.inner_text()
    when = page.locator("li.hit time[datetime]").first
    assert when.get_attribute("title") and when.get_attribute("data-local") == "1"
    assert re.search(r"ago|just now", when.inner_text()), when.inner_text()


def test_slash_focuses_the_search_box_unless_typing(world: dict) -> None:
    page = _logged_in(world, DESKTOP)
    page.goto(world["daemon"].url + "/ui/sessions")
    page.locator("h1").click()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    assert page.locator("#q").input_value() == ""  # the slash is not typed into it
    page.locator("input[name=project]").click()
    page.keyboard.type("a/b")
    assert page.locator("input[name=project]").input_value() == "a/b"
    assert page.evaluate("document.activeElement.name") == "project"


def test_the_session_reads_as_a_story(world: dict) -> None:
    page = _logged_in(world, DESKTOP)
    page.goto(world["daemon"].url + "/ui/session?id=ui-session-1")
    assert page.locator("section.turn").count() == 2 and page.locator("li.step-prompt").count() == 2
    assert "npm test" in page.locator("li.step-error").first.inner_text()
    assert "docs/adr/0007-token-ttl.md" in page.locator("li.step-edit").first.inner_text()
    assert "Raised TOKEN_TTL" in page.locator("li.step-reply").inner_text()
    assert page.locator("li.step-command").count() >= 1


def test_dark_mode_follows_the_system(world: dict) -> None:
    page = _logged_in(world, DESKTOP, color_scheme="dark")
    for name in ("status", "search", "session", "page"):
        page.goto(world["daemon"].url + _every_page(world)[name])
        red, green, blue = (int(x) for x in re.findall(r"\d+", page.evaluate(
            "getComputedStyle(document.body).backgroundColor"))[:3])
        assert red + green + blue < 120, (name, red, green, blue)
        _shot(world, page, f"30-{name}-dark")
    phone = _logged_in(world, PHONE, color_scheme="dark")
    phone.goto(world["daemon"].url + _every_page(world)["session"])
    assert _fits(phone)
    _shot(world, phone, "30-session-dark-phone")
