"""The web view over real HTTP: the login link, what answers without it, CSRF and Origin,
every page, the three actions, and what a team user may see."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from conftest import Daemon
from test_team import add_user, ok
from ui_helpers import Browser, login_path
from wiki_helpers import wait_until

GET_PATHS = ("/ui/", "/ui/?q=rotation", "/ui/sessions", "/ui/handoffs", "/ui/status", "/ui/status?part=1",
             "/ui/static/ui.css", "/ui/static/ui.js", "/ui/static/pygments.css")
POST_PATHS = ("/ui/feedback", "/ui/pin", "/ui/handoffs/cancel", "/ui/logout")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    daemon = Daemon(tmp_path_factory.mktemp("ui") / "data").start()
    alice, bob = add_user(daemon.data_dir, "alice", daemon), add_user(daemon.data_dir, "bob", daemon)
    team = ok(daemon, alice, "POST", "/v1/pages", {
        "text": "Token rotation runs nightly.\n\n```python\ndef rotate(key):\n    return key[::-1]\n```\n\n"
                "<script>alert('x')</script> [click](javascript:alert(1))",
        "kind": "decision", "project": "acme-api", "title": "Token rotation schedule"})
    fixed = ok(daemon, alice, "POST", "/v1/pages", {"text": "Token rotation runs hourly since the audit.",
                                                     "kind": "decision", "project": "acme-api",
                                                     "title": "Token rotation schedule", "supersedes": team["id"]})
    secret = ok(daemon, alice, "POST", "/v1/pages", {"text": "Alice's rotation notebook hides under the desk.",
                                                      "kind": "fact", "project": "acme-api", "scope": "private",
                                                      "title": "Alice rotation notebook"})
    yield {"daemon": daemon, "alice": alice, "bob": bob, "team": team, "fixed": fixed, "secret": secret}
    daemon.stop()


def test_nothing_under_ui_answers_without_the_cookie(served: dict) -> None:
    anonymous = Browser(served["daemon"])
    for path in GET_PATHS + (f"/ui/page?path={served['team']['path']}", "/ui/history?path=x", "/ui/session?id=x"):
        status, _, headers = anonymous.request("GET", path)
        assert status == 303 and headers["Location"] == "/ui/login", path
    for path in POST_PATHS[:-1]:
        assert anonymous.request("POST", path, {"csrf": "x", "path": served["team"]["path"]})[0] == 401, path
    status, text, _ = anonymous.request("GET", "/ui/login")
    assert status == 401 and "ai-memory ui" in text
    # a bearer token is for the API: the view takes only its own cookie
    status, _, _ = anonymous.request("GET", "/ui/", headers={"Authorization": f"Bearer {served['daemon'].token}"})
    assert status == 303


def test_a_login_code_works_once_and_sets_a_strict_httponly_cookie(served: dict) -> None:
    daemon = served["daemon"]
    path = login_path(daemon, served["alice"])
    code = path.split("code=", 1)[1]
    first = Browser(daemon)
    status, text, headers = first.request("GET", path)  # the link shows whose account it opens, nothing more
    assert status == 200 and 'id="login-user">alice<' in text and "Set-Cookie" not in headers
    status, _, headers = first.request("POST", "/ui/login/confirm", {"code": code})
    assert status == 303 and headers["Location"] == "/ui/"
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/ui" in cookie
    status, text, _ = Browser(daemon).request("POST", "/ui/login/confirm", {"code": code})
    assert status == 401 and "used already or has expired" in text
    status, text, _ = Browser(daemon).request("GET", path)
    assert status == 401 and "used already or has expired" in text
    assert Browser(daemon).request("GET", "/ui/login?code=guessed")[0] == 401


def test_every_page_answers_once_logged_in(served: dict) -> None:
    browser = Browser(served["daemon"]).login(served["alice"])
    for path in GET_PATHS:
        browser.get(path)
    fixed = quote(served["fixed"]["path"])
    shown = browser.get(f"/ui/page?path={fixed}")
    assert "Token rotation runs hourly" in shown and 'id="lineage"' in shown
    assert 'id="user">alice<' in shown
    status, _, _ = browser.request("GET", "/ui/page?path=acme-api/nothing.md")
    assert status == 404
    filtered = browser.get("/ui/?q=token+rotation&project=acme-api&kind=decision&scope=project&as_of=2999-01-01")
    assert "Token rotation schedule</a>" in filtered and 'value="decision" checked' in filtered
    assert "Token rotation schedule</a>" not in browser.get("/ui/?q=token+rotation&kind=fact")
    status, text, _ = browser.request("GET", "/ui/?q=token&as_of=someday")
    assert status == 400 and "as_of must be an ISO date" in text


def test_a_page_written_by_someone_else_is_shown_and_never_run(served: dict) -> None:
    browser = Browser(served["daemon"]).login(served["bob"])
    shown = browser.get(f"/ui/page?path={quote(served['team']['path'])}")
    assert "<script>alert" not in shown and "&lt;script&gt;" in shown
    assert 'href="javascript:' not in shown
    assert '<pre class="highlight">' in shown  # the python block is highlighted
    status, _, headers = browser.request("GET", f"/ui/page?path={quote(served['team']['path'])}")
    assert "default-src 'self'" in headers["Content-Security-Policy"]


def test_a_post_needs_the_sessions_csrf_token_and_the_daemons_origin(served: dict) -> None:
    daemon = served["daemon"]
    browser = Browser(daemon).login(served["alice"])
    form = {"path": served["fixed"]["path"], "signal": "helpful"}
    assert browser.request("POST", "/ui/feedback", form)[0] == 403
    assert browser.request("POST", "/ui/feedback", {**form, "csrf": "not-it"})[0] == 403
    other = Browser(daemon).login(served["alice"])  # another session's token is not this one's
    assert browser.request("POST", "/ui/feedback", {**form, "csrf": other.csrf()})[0] == 403
    token = browser.csrf()
    foreign = {"Origin": "http://evil.example"}
    assert browser.request("POST", "/ui/feedback", {**form, "csrf": token}, headers=foreign)[0] == 403
    assert browser.request("GET", "/ui/", headers=foreign)[0] == 403
    assert browser.request("GET", "/ui/", headers={"Host": "evil.example"})[0] == 403
    status, _, headers = browser.request("POST", "/ui/feedback", {**form, "csrf": token})
    assert status == 303 and "salience" in headers["Location"]
    page = ok(daemon, served["alice"], "GET", f"/v1/pages?path={quote(form['path'])}")
    assert page["path"] == form["path"]
    audit = ok(daemon, daemon.token, "GET", "/v1/audit?user=alice")
    assert any(a["action"] == "feedback" and a["target"] == form["path"] for a in audit["entries"])


def test_pin_and_unpin_change_the_pages_frontmatter(served: dict) -> None:
    daemon = served["daemon"]
    browser = Browser(daemon).login(served["alice"])
    rel = served["fixed"]["path"]
    meta = lambda: yaml.safe_load((daemon.data_dir / "wiki" / rel).read_text().split("---\n")[1])  # noqa: E731
    status, _, _ = browser.request("POST", "/ui/pin", {"path": rel, "pinned": "true", "csrf": browser.csrf()})
    assert status == 303 and meta()["pinned"] is True
    assert "Unpin</button>" in browser.get(f"/ui/page?path={quote(rel)}")
    browser.request("POST", "/ui/pin", {"path": rel, "pinned": "false", "csrf": browser.csrf()})
    assert "pinned" not in meta()


def test_a_handoff_is_cancelled_from_the_view_by_its_owner_only(served: dict, tmp_path: Path) -> None:
    daemon = served["daemon"]
    made = ok(daemon, served["alice"], "POST", "/v1/handoffs", {"summary": "finish the rotation job",
                                                                 "cwd": str(tmp_path), "shared": True})["handoff"]
    bob = Browser(daemon).login(served["bob"])
    listed = bob.get("/ui/handoffs")
    assert "finish the rotation job" in listed and made["id"] not in listed  # shared: shown, not his to cancel
    status, text, _ = bob.request("POST", "/ui/handoffs/cancel", {"id": made["id"], "csrf": bob.csrf()})
    assert status in (403, 404), text[:300]
    alice = Browser(daemon).login(served["alice"])
    status, _, _ = alice.request("POST", "/ui/handoffs/cancel", {"id": made["id"], "csrf": alice.csrf()})
    assert status == 303
    assert ok(daemon, served["alice"], "GET", "/v1/handoffs?state=cancelled")["handoffs"][0]["id"] == made["id"]


def test_a_team_user_sees_only_what_their_token_may_see(served: dict) -> None:
    daemon, secret = served["daemon"], served["secret"]
    alice, bob = Browser(daemon).login(served["alice"]), Browser(daemon).login(served["bob"])
    assert "Alice rotation notebook" in alice.get("/ui/?q=rotation+notebook")
    assert "Alice rotation notebook" not in bob.get("/ui/?q=rotation+notebook")
    assert "Alice rotation notebook" not in bob.get("/ui/")
    for path in (f"/ui/page?path={quote(secret['path'])}", f"/ui/history?path={quote(secret['path'])}"):
        assert bob.request("GET", path)[0] == 404
        alice.get(path)


def test_history_shows_each_version_with_its_diff(served: dict) -> None:
    daemon = served["daemon"]
    browser = Browser(daemon).login(served["alice"])
    rel = served["fixed"]["path"]
    wiki = daemon.data_dir / "wiki" / rel
    wiki.write_text(wiki.read_text().replace("hourly since the audit", "every ten minutes since the audit"))
    history = lambda: browser.get(f"/ui/history?path={quote(rel)}")  # noqa: E731
    wait_until(lambda: "every ten minutes" in history(), timeout=20)
    shown = history()
    assert re.search(r'<span class="add">\+[^<]*every ten minutes', shown)
    assert re.search(r'<span class="del">-[^<]*hourly since the audit', shown)


def test_a_revoked_users_session_ends_at_once(served: dict) -> None:
    daemon = served["daemon"]
    carol_token = add_user(daemon.data_dir, "carol", daemon)
    carol = Browser(daemon).login(carol_token)
    carol.get("/ui/")
    ok(daemon, daemon.token, "POST", "/v1/users/carol/revoke")
    assert carol.request("GET", "/ui/")[0] == 303


def test_ai_memory_ui_prints_a_link_that_logs_in_once(served: dict) -> None:
    import json

    from conftest import run_cli

    daemon = served["daemon"]
    done = run_cli(daemon.data_dir, "ui", "--json", AI_MEMORY_URL=daemon.url)
    assert done.returncode == 0, done.stderr
    url = json.loads(done.stdout)["url"]
    assert url.startswith(f"{daemon.url}/ui/login?code=")
    browser = Browser(daemon).open_link(url.removeprefix(daemon.url))
    assert "aim_ui=" in browser.set_cookie
    done = run_cli(daemon.data_dir, "ui", "--no-open", AI_MEMORY_URL=daemon.url)
    assert done.returncode == 0 and done.stdout.startswith(f"{daemon.url}/ui/login?code=")
    assert "confirm the login" in done.stderr


def test_codes_and_sessions_expire() -> None:
    from ai_memory.server.ui.access import CODE_TTL_S, SESSION_TTL_S, UiAccess

    now = [0.0]
    active = {"local", "alice"}
    access = UiAccess(lambda user: user in active, clock=lambda: now[0])
    late = access.new_code("alice")
    now[0] += CODE_TTL_S + 1
    assert access.redeem(late) is None
    sid, session = access.redeem(access.new_code("alice")) or ("", None)
    assert session is not None and access.session(sid) == session
    now[0] += SESSION_TTL_S + 1
    assert access.session(sid) is None
    sid, _ = access.redeem(access.new_code("alice")) or ("", None)
    active.discard("alice")
    assert access.session(sid) is None
    assert access.redeem(access.new_code("alice")) is None  # a code of a revoked user buys nothing


def test_the_json_routes_behind_the_view_keep_its_rules(served: dict) -> None:
    daemon, secret = served["daemon"], served["secret"]
    bob = {"Authorization": f"Bearer {served['bob']}"}
    assert daemon.request("GET", f"/v1/pages/history?path={quote(secret['path'])}", headers=bob)[0] == 404
    assert daemon.request("POST", "/v1/pages/pin", {"path": secret["path"]}, headers=bob)[0] == 404
    history = ok(daemon, served["alice"], "GET", f"/v1/pages/history?id={secret['id']}")
    assert history["path"] == secret["path"] and history["revisions"][0]["removed"] is False
    assert daemon.request("POST", "/v1/pages/pin", {"path": secret["path"], "pinned": "yes"})[0] == 400
    done = ok(daemon, served["alice"], "POST", "/v1/pages/pin", {"id": secret["id"], "pinned": True})
    assert done == {"path": secret["path"], "id": secret["id"], "pinned": True, "changed": True}
    again = ok(daemon, served["alice"], "POST", "/v1/pages/pin", {"id": secret["id"]})
    assert again["changed"] is False


def test_a_forms_next_page_stays_on_the_view(served: dict) -> None:
    browser = Browser(served["daemon"]).login(served["alice"])
    rel = served["fixed"]["path"]
    for hostile in ("https://evil.example/", "//evil.example/ui/", "/ui/\r\nSet-Cookie: x=1", "/ui/" + "a" * 5000):
        status, _, headers = browser.request("POST", "/ui/feedback", {"path": rel, "signal": "helpful",
                                                                      "csrf": browser.csrf(), "next": hostile})
        assert status == 303 and headers["Location"].startswith(f"/ui/page?path={rel}"), hostile[:40]
        assert "Set-Cookie" not in headers


def test_the_login_page_has_its_stylesheet_and_nothing_else_opens(served: dict) -> None:
    anonymous = Browser(served["daemon"])
    status, text, headers = anonymous.request("GET", "/ui/login")
    assert status == 401 and 'href="/ui/login/ui.css"' in text and "<style" not in text and "<script" not in text
    status, css, headers = anonymous.request("GET", "/ui/login/ui.css")
    assert status == 200 and headers["Content-Type"].startswith("text/css") and "prefers-color-scheme: dark" in css
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    assert anonymous.request("GET", "/ui/static/ui.css")[0] == 303  # the view's other assets need a session
    assert anonymous.request("POST", "/ui/login/ui.css", {"x": "1"})[0] in (401, 403, 405)


def test_no_page_inlines_a_script_or_a_style(served: dict) -> None:
    """The CSP (default-src 'self') refuses inline code: every page keeps to its files."""
    browser = Browser(served["daemon"]).login(served["alice"])
    for path in ("/ui/", "/ui/?q=rotation", "/ui/sessions", "/ui/handoffs", "/ui/status",
                 f"/ui/page?path={quote(served['fixed']['path'])}"):
        shown = browser.get(path)
        assert not re.search(r"<script(?![^>]*\ssrc=)|<style|\sstyle=|\son[a-z]+=", shown), path


def test_status_shows_sizes_and_times_not_python_values(served: dict) -> None:
    browser = Browser(served["daemon"]).login(served["alice"])
    for path in ("/ui/status", "/ui/status?part=1"):
        text = re.sub(r"<[^>]+>", " ", browser.get(path))
        assert not re.search(r"\bNone\b|\bFalse\b|\bTrue\b|\{'|\[\]", text), text
        assert re.search(r"\d (B|KB|MB)\b", text) and "last commit" in text
    assert re.search(r'<time datetime="\d{4}-[^"]+Z" title="[^"]+ UTC"', browser.get("/ui/status"))


def test_moments_sizes_and_durations_are_spelled_once() -> None:
    from ai_memory.server.ui.display import duration, moment, plural, size

    shown = str(moment("2026-12-07T05:04:33.123456Z"))
    assert shown == ('<time datetime="2026-12-07T05:04:33.123456Z" title="2026-12-07 05:04:33 UTC" data-style="ago">'
                     "2026-12-07 05:04 UTC</time>")
    assert "05:04:33 UTC</time>" in str(moment("2026-12-07T05:04:33Z", "clock"))
    assert "—" in str(moment(None)) and str(moment("<b>soon</b>")) == "&lt;b&gt;soon&lt;/b&gt;"
    assert [duration(s) for s in (8, 200, 7200, 90061)] == ["8 s", "3 min 20 s", "2 h", "1 d 1 h"]
    assert [size(b) for b in (0, 512, 1536, 25 * 2**20)] == ["0 B", "512 B", "1.5 KB", "25 MB"]
    assert plural(1, "page") == "1 page" and plural(1204, "batch", "batches") == "1,204 batches"
