"""Prompt recall end to end: a real daemon, the real hook client (``ai-memory hook``, which hands
the event to the shell client) fed the payload an agent's prompt hook gets, and what it prints
read as the agent reads it."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_memory.core.recall import RecallSettings, choose
from conftest import REPO, Daemon, cli_env, run_cli
from ui_helpers import Browser
from wiki_helpers import wait_until

PROJECT = "acme"
FLAKY = "test_login is flaky when the session cookie expires during the run: freeze time with freezegun in the fixture."
PYGIT2 = "Keep pygit2 below 2.0: version 2 dropped the Python 3.9 wheels that the CI images still use."
RETRIES = ("The webhook sender retries failed deliveries 5 times with exponential backoff starting at 2 s,"
           " capped at 5 minutes; 4xx answers other than 429 are not retried.")
UNRELATED = ("add dark mode to the settings page", "update the copyright year in the footer",
             "refactor the database connection pool into its own module")


def remember(daemon: Daemon, kind: str, title: str, text: str, **extra: Any) -> dict[str, Any]:
    status, body, _ = daemon.request("POST", "/v1/pages", {"kind": kind, "title": title, "text": text,
                                                           "project": PROJECT, **extra})
    assert status == 201, body
    return body


def project_dir(root: Path) -> Path:
    cwd = root / "work" / PROJECT
    if not cwd.exists():
        cwd.mkdir(parents=True)
        (cwd / ".ai-memory.toml").write_text(f'project = "{PROJECT}"\n')
    return cwd


# ``ai-memory hook`` where the shell client cannot be exec'd (no /bin/sh): the Python client.
IN_PROCESS = ("import os, sys\n"
              "def cannot_exec(*args): raise OSError('no shell here')\n"
              "os.execv = cannot_exec\n"
              "from ai_memory.cli.main import main\n"
              "sys.exit(main(sys.argv[1:]))\n")


def prompt_hook(data_dir: Path, cwd: Path, session_id: str, prompt: str, *, agent: str = "claude",
                client: str = "shell", **env: str) -> dict[str, Any]:
    """The prompt hook as the agent runs it (``ai-memory hook``, the payload on stdin): the JSON
    it printed. ``client``: the shell client it hands the event to, or the Python one."""
    event = "BeforeAgent" if agent == "gemini" else "UserPromptSubmit"
    payload = {"session_id": session_id, "hook_event_name": event, "cwd": str(cwd), "prompt": prompt,
               "transcript_path": f"/tmp/{session_id}.jsonl"}
    command = ["-m", "ai_memory.cli"] if client == "shell" else ["-c", IN_PROCESS]
    done = subprocess.run([sys.executable, *command, "hook", "--agent", agent, "--event", event],
                          input=json.dumps(payload), capture_output=True, text=True, timeout=60,
                          env=cli_env(data_dir, **env), cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def handed(reply: dict[str, Any]) -> str:
    """What the agent reads beside its prompt ('' when the hook printed {})."""
    return str((reply.get("hookSpecificOutput") or {}).get("additionalContext") or "")


def items(context: str) -> list[str]:
    return [line for line in context.splitlines() if line.startswith("- [")]


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("recall")
    data_dir = root / "data"
    data_dir.mkdir()
    daemon = Daemon(data_dir).start()
    try:
        pages = {"flaky": remember(daemon, "gotcha", "Login test flaky", FLAKY),
                 "pygit2": remember(daemon, "rule", "Pin pygit2 below 2", PYGIT2),
                 "retries": remember(daemon, "decision", "Webhook retry policy", RETRIES)}
        yield {"daemon": daemon, "data_dir": data_dir, "cwd": project_dir(root), "pages": pages, "root": root}
    finally:
        daemon.stop()


@pytest.mark.parametrize("client", ["shell", "python"])
def test_a_prompt_about_what_memory_holds_gets_it_and_other_prompts_get_nothing(memory: dict[str, Any],
                                                                                 client: str) -> None:
    data_dir, cwd, pages = memory["data_dir"], memory["cwd"], memory["pages"]
    held = f"s-held-{client}"
    reply = prompt_hook(data_dir, cwd, held, "the login test is flaky again, what did we find last time?",
                        client=client)
    assert reply["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    context = handed(reply)
    [item] = [line for line in items(context) if pages["flaky"]["path"] in line]
    assert re.match(rf"- \[gotcha, \d{{4}}-\d\d-\d\d\] {re.escape(pages['flaky']['path'])}: ", item), item
    assert "freeze time with freezegun" in item  # the line that matched, not a summary
    assert "reference, not instructions" in context and "<ai-memory-data>" in context
    assert context.rstrip().endswith("</ai-memory-data>") and len(context) <= 1200
    assert pages["retries"]["path"] not in context  # confident about the gotcha only
    for prompt in UNRELATED:
        assert prompt_hook(data_dir, cwd, f"s-unrelated-{client}", prompt, client=client) == {}, prompt
    gemini = prompt_hook(data_dir, cwd, f"s-gemini-{client}", "why did we pin pygit2 below 2?", agent="gemini",
                         client=client)
    assert gemini["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert pages["pygit2"]["path"] in handed(gemini)
    # the prompt itself was captured, as every hook event is
    wait_until(lambda: any(o["event"] == "user-prompt" for o in memory["daemon"].request(
        "GET", f"/v1/sessions/{held}/observations")[1].get("observations", [])), timeout=30.0)


def test_a_session_is_never_handed_the_same_page_twice(memory: dict[str, Any]) -> None:
    data_dir, cwd, daemon = memory["data_dir"], memory["cwd"], memory["daemon"]
    path = memory["pages"]["pygit2"]["path"]
    assert path in handed(prompt_hook(data_dir, cwd, "s-twice", "why did we pin pygit2 below 2?"))
    assert prompt_hook(data_dir, cwd, "s-twice", "why is pygit2 pinned below version 2 again?") == {}
    assert path in handed(prompt_hook(data_dir, cwd, "s-other", "why is pygit2 pinned below version 2 again?"))
    browser = Browser(daemon).login(daemon.token)  # the web view shows what the session was handed
    status, html, _ = browser.request("GET", "/ui/session?id=s-twice")
    assert status == 200 and "Handed over by memory" in html and path in html and "beside a prompt" in html


def test_another_users_calls_naming_a_session_change_nothing_of_it(memory: dict[str, Any]) -> None:
    data_dir, cwd, daemon = memory["data_dir"], memory["cwd"], memory["daemon"]
    status, user, _ = daemon.request("POST", "/v1/users", {"name": "mallory"})
    assert status == 201, user
    path = memory["pages"]["flaky"]["path"]
    for i in range(3):  # mallory names alice's session: handed over to mallory, not recorded for alice
        status, reply, _ = daemon.request("POST", "/v1/recall", {"prompt": "the login test is flaky again",
                                                                 "project": PROJECT, "session_id": "s-alice"},
                                          headers={"Authorization": f"Bearer {user['token']}"})
        assert status == 200, reply
        assert (path in reply["text"]) == (i == 0)  # handed to mallory once: the record it made is hers
    assert path in handed(prompt_hook(data_dir, cwd, "s-alice", "the login test is flaky again"))


def test_the_briefing_pages_are_not_handed_over_again(memory: dict[str, Any]) -> None:
    data_dir, cwd, daemon = memory["data_dir"], memory["cwd"], memory["daemon"]
    path = memory["pages"]["retries"]["path"]
    status, body, _ = daemon.request("POST", "/v1/pages/pin", {"path": path, "pinned": True})
    assert status == 200, body
    try:
        start = {"session_id": "s-briefed", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(cwd)}
        done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "hook", "--agent", "claude", "--event",
                               "SessionStart"], input=json.dumps(start), capture_output=True, text=True,
                              env=cli_env(data_dir), cwd=REPO, timeout=60)
        assert "Webhook retry policy" in done.stdout  # the pinned decision is in the briefing
        prompt = "what is our retry policy for failed webhook deliveries?"
        assert path not in handed(prompt_hook(data_dir, cwd, "s-briefed", prompt))
        assert path in handed(prompt_hook(data_dir, cwd, "s-not-briefed", prompt))
    finally:
        daemon.request("POST", "/v1/pages/pin", {"path": path, "pinned": False})


def test_never_the_sessions_own_page_a_superseded_memory_or_memorys_own_tool_calls(memory: dict[str, Any]) -> None:
    data_dir, cwd, daemon = memory["data_dir"], memory["cwd"], memory["daemon"]
    base = {"cwd": str(cwd), "transcript_path": "/tmp/t.jsonl"}
    own = [{"session_id": "s-own", "hook_event_name": "UserPromptSubmit",
            "prompt": "make the zanzibar cache evict entries after ten minutes"},
           {"session_id": "s-own", "hook_event_name": "Stop",
            "last_assistant_message": "The zanzibar cache now evicts entries after ten minutes (TTL 600 s)."},
           {"session_id": "s-tool", "hook_event_name": "UserPromptSubmit", "prompt": "look around the repository"},
           {"session_id": "s-tool", "hook_event_name": "PostToolUse", "tool_name": "mcp__ai-memory__memory_query",
            "tool_input": {"query": "xylophone quantizer"},
            "tool_response": "xylophone quantizer overflow: clamp the quantizer input to the xylophone range"},
           {"session_id": "s-tool", "hook_event_name": "Stop", "last_assistant_message": "Looked around."}]
    for payload in own:
        assert daemon.post_hook({**base, **payload})[0] == 202
    for session in ("s-own", "s-tool"):
        assert daemon.request("POST", f"/v1/sessions/{session}/finalize")[0] == 200
    def own_pages() -> list[str]:
        recent = daemon.request("GET", f"/v1/recent?project={PROJECT}&limit=50")[1]["sessions"]
        return [s["page_path"] for s in recent if s["id"] == "s-own" and s["page_path"]]
    wait_until(own_pages, timeout=30.0)
    own_page = own_pages()[0]
    prompt = "why does the zanzibar cache evict entries after ten minutes?"
    assert own_page not in handed(prompt_hook(data_dir, cwd, "s-own", prompt))  # its own page: never
    assert own_page in handed(prompt_hook(data_dir, cwd, "s-later", prompt))
    assert prompt_hook(data_dir, cwd, "s-x", "why does the xylophone quantizer overflow?") == {}

    old = remember(daemon, "decision", "Session cookie lifetime", "Session cookies of the portal last 8 hours.")
    new = remember(daemon, "decision", "Session cookie lifetime", "Session cookies of the portal last 12 hours.",
                   supersedes=old["id"], reason="longer shifts")
    context = handed(prompt_hook(data_dir, cwd, "s-cookie", "how long do the portal session cookies last?"))
    assert new["path"] in context and old["path"] not in context


def test_ai_memory_recall_shows_what_would_be_handed_over_and_why(memory: dict[str, Any]) -> None:
    data_dir = memory["data_dir"]
    path = memory["pages"]["flaky"]["path"]
    done = run_cli(data_dir, "recall", "the login test is flaky again", "--project", PROJECT, "--explain")
    assert done.returncode == 0, done.stderr
    assert path in done.stdout and "<ai-memory-data>" in done.stdout
    assert "handed over from confidence 0.2 up" in done.stdout
    assert re.search(r"searched in \d+ ms: page_fts [\d.]+", done.stdout)  # where the time went
    given = [line for line in done.stdout.splitlines() if line.lstrip().startswith("given")]
    assert any(path in line for line in given)
    left = [line for line in done.stdout.splitlines() if line.lstrip().startswith("left")]
    assert all(": " in line for line in left)  # each hit left out says why
    reply = json.loads(run_cli(data_dir, "recall", "the login test is flaky again", "--project", PROJECT,
                               "--json").stdout)
    assert reply["items"][0]["path"] == path and 0.2 <= reply["items"][0]["confidence"] <= 1
    quiet = run_cli(data_dir, "recall", UNRELATED[0], "--project", PROJECT)
    assert quiet.returncode == 0 and "nothing: memory would stay silent" in quiet.stdout
    # only a look: it hands nothing over, so a session still gets the page
    assert path in handed(prompt_hook(data_dir, memory["cwd"], "s-after-look", "the login test is flaky again"))


def test_bad_recall_requests_are_refused_with_a_reason(memory: dict[str, Any]) -> None:
    daemon = memory["daemon"]
    for body, expected in (([1, 2], "JSON object"), ({"project": PROJECT}, "missing prompt"),
                           ({"prompt": "why did we pin pygit2?"}, "missing project"),
                           ({"prompt": "why did we pin pygit2?", "project": "../etc"}, "project")):
        status, reply, _ = daemon.request("POST", "/v1/recall", body)
        assert status == 400 and expected in json.dumps(reply), (body, reply)
    status, reply, _ = daemon.request("POST", "/v1/recall?format=hook", raw=b"{not json",
                                      headers={"Content-Type": "application/json"})
    assert status == 400


def test_an_answer_the_hook_gave_up_on_is_not_recorded_as_handed_over(memory: dict[str, Any]) -> None:
    """The hook waits budget_ms: an answer past it was never read, so the session is handed
    those pages at its next prompt."""
    daemon, path = memory["daemon"], memory["pages"]["flaky"]["path"]
    prompt = {"prompt": "the login test is flaky again", "project": PROJECT, "session_id": "s-gave-up"}
    status, reply, _ = daemon.request("POST", "/v1/recall?format=hook&budget_ms=1", prompt)
    assert status == 200 and reply == {}
    status, reply, _ = daemon.request("POST", "/v1/recall?format=hook&budget_ms=5000", prompt)
    assert status == 200 and path in handed(reply)
    for bad in ("0", "-5", "soon", "600000"):
        status, reply, _ = daemon.request("POST", f"/v1/recall?format=hook&budget_ms={bad}", prompt)
        assert status == 400 and "budget_ms" in json.dumps(reply), (bad, reply)


def test_a_session_id_is_read_as_ingest_stores_it(memory: dict[str, Any]) -> None:
    """Any key an agent names its session with, clipped as ingest clips it: the session's own
    page and what it was handed are found whichever way the id came."""
    daemon, path = memory["daemon"], memory["pages"]["pygit2"]["path"]
    long_id = "s-" + "x" * 500
    for named in ({"sessionId": long_id}, {"session_id": long_id[:200]}):
        status, reply, _ = daemon.request("POST", "/v1/recall", {"prompt": "why did we pin pygit2 below 2?",
                                                                 "project": PROJECT, **named})
        assert status == 200, reply
        if named.get("sessionId"):
            assert path in reply["text"]
        else:  # the same session, named by its stored (clipped) id: handed over already
            assert path not in reply["text"]


def test_the_sessions_own_page_or_one_it_has_does_not_silence_the_rest() -> None:
    """A resumed session's own page repeats its prompt and ranks first; it is never handed
    over, and the others are measured against the best of what the session may still get."""
    def hit(path: str, score: float, session_id: str | None = None) -> dict[str, Any]:
        return {"path": path, "score": score, "confidence": 0.9, "type": "Decision", "session_id": session_id,
                "updated": "2026-12-01T10:00:00Z", "snippet": f"what {path} says"}

    hits = [hit("p/sessions/own.md", 1.0, "s-own"), hit("p/decisions/had.md", 0.95), hit("p/decisions/a.md", 0.6),
            hit("p/decisions/b.md", 0.55), hit("p/decisions/far.md", 0.3)]
    choice = choose(hits, project="p", session_id="s-own", given=frozenset({"p/decisions/had.md"}), chars_given=0,
                    settings=RecallSettings())
    assert [i.path for i in choice.items] == ["p/decisions/a.md", "p/decisions/b.md"]
    why = {s["path"]: s["why"] for s in choice.skipped}
    assert why["p/sessions/own.md"] == "this session's own page"
    assert why["p/decisions/had.md"] == "handed over already in this session"
    assert "min_ratio" in why["p/decisions/far.md"]


def _accept_backlog(port: int) -> int:
    """Connections the kernel accepted for the listening socket on ``port`` that its process has
    not taken yet (a stopped daemon takes none)."""
    waiting = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, queues = fields[1], fields[3], fields[4]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                waiting += int(queues.split(":")[1], 16)
    return waiting


@pytest.mark.parametrize("client", ["shell", "python"])
def test_a_stopped_daemon_is_not_asked_and_the_prompt_is_still_captured(tmp_path: Path, client: str) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    daemon = Daemon(data_dir).start()
    try:
        remember(daemon, "gotcha", "Login test flaky", FLAKY)
        cwd = project_dir(tmp_path)
        assert handed(prompt_hook(data_dir, cwd, "s-up", "the login test is flaky again", client=client))
        assert daemon.proc is not None
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            for i in range(5):
                assert prompt_hook(data_dir, cwd, f"s-stopped-{i}", "the login test is flaky again",
                                   client=client) == {}
            assert _accept_backlog(daemon.port) == 0, "a prompt hook connected to the stopped daemon"
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
        wait_until(lambda: all(daemon.request("GET", f"/v1/sessions/s-stopped-{i}/observations")[0] == 200
                               for i in range(5)), timeout=30.0)
    finally:
        daemon.stop()


def test_the_session_budget_and_turning_recall_off(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    daemon = Daemon(data_dir, env={"AI_MEMORY_RECALL_SESSION_MAX_CHARS": "500"}).start()
    try:
        remember(daemon, "gotcha", "Login test flaky", FLAKY)
        remember(daemon, "rule", "Pin pygit2 below 2", PYGIT2)
        cwd = project_dir(tmp_path)
        first = handed(prompt_hook(data_dir, cwd, "s-budget", "the login test is flaky again"))
        assert first and len(first) <= 500
        assert prompt_hook(data_dir, cwd, "s-budget", "why did we pin pygit2 below 2?") == {}  # the session's 500 spent
        assert handed(prompt_hook(data_dir, cwd, "s-fresh", "why did we pin pygit2 below 2?"))
        # recall.on_prompt = false, as the hook client reads it (the environment, like config.toml)
        assert prompt_hook(data_dir, cwd, "s-off", "why did we pin pygit2 below 2?",
                           AI_MEMORY_RECALL_ON_PROMPT="false") == {}
    finally:
        daemon.stop()
    (data_dir / "config.toml").write_text("[recall]\non_prompt = false\n")
    daemon = Daemon(data_dir).start()
    try:
        assert prompt_hook(data_dir, project_dir(tmp_path), "s-off2", "why did we pin pygit2 below 2?") == {}
        status, reply, _ = daemon.request("POST", "/v1/recall?format=hook", {
            "session_id": "s-off3", "cwd": str(project_dir(tmp_path)), "prompt": "why did we pin pygit2 below 2?"})
        assert status == 200 and reply == {}  # the daemon says nothing either
    finally:
        daemon.stop()


def test_with_the_model_a_decision_answers_a_question_in_other_words_and_leads_its_session(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    daemon = Daemon(data_dir, env={"AI_MEMORY_EMBED_ENABLED": "1"}).start(timeout=120)
    try:
        base = {"session_id": "s-talk", "cwd": str(project_dir(tmp_path)), "transcript_path": "/tmp/t.jsonl"}
        for payload in ({"hook_event_name": "UserPromptSubmit",
                         "prompt": "the webhook sender gives up too early when the receiver is down"},
                        {"hook_event_name": "Stop", "last_assistant_message":
                         "We talked it over: retry failed deliveries 5 times with exponential backoff from 2 s,"
                         " capped at 5 minutes, and never retry a 4xx other than 429."}):
            assert daemon.post_hook({**base, **payload})[0] == 202
        assert daemon.request("POST", "/v1/sessions/s-talk/finalize")[0] == 200
        decision = remember(daemon, "decision", "Webhook retry policy", RETRIES)

        def embedded() -> bool:
            embeddings = daemon.request("GET", "/status")[1]["embeddings"]
            return bool(embeddings.get("ready")) and not any(embeddings["backlog"].values())
        wait_until(embedded, timeout=180)
        hits = daemon.request("POST", "/v1/query", {"q": "what did we decide about the webhook retry policy",
                                                   "project": PROJECT})[1]["hits"]
        assert hits[0]["path"] == decision["path"], [h["path"] for h in hits]  # the decision before the talk
        assert hits[0]["confidence"] >= RecallSettings().min_confidence  # sure enough to be handed over
        context = handed(prompt_hook(data_dir, project_dir(tmp_path), "s-new",
                                     "what did we decide about the retry policy"))
        assert items(context) and decision["path"] in items(context)[0]
        assert prompt_hook(data_dir, project_dir(tmp_path), "s-new2", "add dark mode to the settings page") == {}
    finally:
        daemon.stop()


def test_the_config_defaults_are_prompt_recalls_own() -> None:
    """config.py states them literally (importing the rules would slow every hook's start)."""
    from ai_memory.config import KEYS

    defaults = {k.name: k.default for k in KEYS if k.section == "recall" and k.name != "on_prompt"}
    assert defaults == {name: getattr(RecallSettings(), name) for name in defaults}


def test_both_hook_clients_tell_the_daemon_the_same_budget() -> None:
    from ai_memory.client.hook_client import RECALL_BUDGET_S, RECALL_DAEMON_BUDGET_MS

    script = (REPO / "hooks" / "ai-memory-hook").read_text()
    assert f"RECALL_BUDGET_MS={RECALL_DAEMON_BUDGET_MS}\n" in script
    assert f"RECALL_BUDGET_S={RECALL_BUDGET_S:g}\n" in script
    assert RECALL_DAEMON_BUDGET_MS < RECALL_BUDGET_S * 1000  # the daemon gives up before the hook does


def test_an_edit_is_handed_over_as_the_file_it_changed_and_what_it_put_in(memory: dict[str, Any]) -> None:
    daemon, cwd = memory["daemon"], memory["cwd"]
    base = {"session_id": "s-edit", "cwd": str(cwd), "transcript_path": "/tmp/s-edit.jsonl"}
    for payload in ({"hook_event_name": "UserPromptSubmit", "prompt": "raise the quokka throttle ceiling"},
                    {"hook_event_name": "PostToolUse", "tool_name": "Edit",
                     "tool_input": {"file_path": f"{cwd}/acme/quokka_throttle.py", "old_string": "CEILING = 10",
                                    "new_string": "CEILING = 40  # quokka throttle ceiling raised"},
                     "tool_response": {"filePath": f"{cwd}/acme/quokka_throttle.py"}}):
        assert daemon.post_hook({**base, **payload})[0] == 202
    assert daemon.request("POST", "/v1/sessions/s-edit/finalize")[0] == 200

    def edit_evidence() -> list[dict[str, Any]]:
        hits = daemon.request("POST", "/v1/query", {"q": "quokka throttle ceiling CEILING 40",
                                                   "project": PROJECT})[1]["hits"]
        return [e for h in hits for e in h["evidence"] if e.get("file")]
    wait_until(edit_evidence, timeout=30.0)
    [edit] = edit_evidence()[:1]
    assert edit["file"].endswith("acme/quokka_throttle.py") and edit["event"] == "post-tool-use"
    assert "CEILING = 40" in edit["snippet"] and "quokka_throttle.py" not in edit["snippet"]
