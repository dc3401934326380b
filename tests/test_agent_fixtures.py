"""Every agent's own payloads, through the hook command ``ai-memory install-hooks`` installed for
it, into a real daemon: what each agent says is stored as what it means (session, project,
prompt, tool call, failure, reply), the session's page is compiled, the next session's start is
briefed in the shape that agent reads, and a prompt is handed what memory holds.

The payloads are recorded from the real CLIs (``tests/fixtures/agents/<agent>/``), or, where the
CLI cannot run here (Cursor needs an account), taken field by field from the agent's own code
(each folder's SOURCE.md says which). The real-agent suite (``tests/agents/``) drives the CLIs
themselves.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import subprocess
import uuid
from datetime import datetime, timezone
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Daemon, cli_env

FIXTURES = REPO / "tests" / "fixtures" / "agents"
SEEDED = "Webhook senders retry 5 times with exponential backoff, capped at zebracorn-limit 60 seconds."


@dataclass(frozen=True)
class Agent:
    name: str
    start: str  # fixture of the session's start (its file name without .json)
    prompt: str | None  # None: the agent's hooks are never told the prompt
    tool: str  # a shell call that ran, and one that failed
    failure: str
    reply: str | None  # None: the agent's hooks are never told the reply
    end: str
    context_of: Any  # the hook's stdout → the context it adds
    said: tuple[str | None, str, str]  # the fixtures' prompt, shell command and reply (or failure), as the page shows them

    def fixture(self, name: str) -> dict[str, Any]:
        return json.loads((FIXTURES / self.name / f"{name}.json").read_text())


def cursor_context(out: dict[str, Any]) -> str:
    return str(out.get("additional_context", ""))


def copilot_context(out: dict[str, Any]) -> str:
    return str(out.get("additionalContext", ""))


def claude_context(out: dict[str, Any]) -> str:
    return str(out.get("hookSpecificOutput", {}).get("additionalContext", ""))


def no_context(out: dict[str, Any]) -> str:
    raise AssertionError(f"this agent reads no context from its hooks, yet was handed {out}")


AGENTS = {
    "cline": Agent("cline", "TaskStart", None, "PostToolUse", "PostToolUse-nonzero-exit", None, "TaskComplete",
                   no_context, (None, "echo hi0", "All done, said hi.")),
    "qwen": Agent("qwen", "SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop",
                  "SessionEnd", claude_context,
                  ("Run echo hi twice, then tell me you are done.", "echo hi0", "All done, said hi.")),
    "opencode": Agent("opencode", "SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop",
                      "SessionEnd", claude_context,
                      ("run two commands, please", "echo first-call", "All done: two commands ran.")),
    "cursor": Agent("cursor", "sessionStart", "beforeSubmitPrompt", "postToolUse", "postToolUseFailure",
                    "afterAgentResponse", "sessionEnd", cursor_context,
                    ("Fix the flaky retry test", "pytest -q tests/test_retry.py", "MAX_RETRIES was 4")),
    "copilot": Agent("copilot", "sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure",
                     None, "sessionEnd", copilot_context,
                     ("Run two shell commands please", "echo first-call", "Path does not exist")),
}


def installed_command(home: Path, agent: str, event: str) -> str:
    """The shell command the agent would run for ``event``, read from what install-hooks wrote."""
    if agent == "cursor":
        hooks = json.loads((home / ".cursor" / "hooks.json").read_text())["hooks"]
        [handler] = hooks[event]
        return str(handler["command"])
    if agent == "copilot":
        hooks = json.loads((home / ".copilot" / "hooks" / "ai-memory.json").read_text())["hooks"]
        [handler] = hooks[event]
        return str(handler["bash"])
    if agent == "qwen":
        hooks = json.loads((home / ".qwen" / "settings.json").read_text())["hooks"]
        [group] = hooks[event]
        return str(group["hooks"][0]["command"])
    if agent == "cline":  # a script of ours, named after the event
        return f"/bin/sh {home / 'Documents' / 'Cline' / 'Hooks' / event}"
    if agent == "opencode":  # the plugin runs its HOOK_CMD with the event filled in
        plugin = (home / ".config" / "opencode" / "plugins" / "ai-memory.js").read_text()
        [command] = re.findall(r"^const HOOK_CMD = (\".*\")", plugin, re.M)
        return str(json.loads(command)).replace("{event}", event)
    raise AssertionError(agent)


@dataclass
class Setup:
    daemon: Daemon
    home: Path
    project: Path

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
        return {**keep, "HOME": str(self.home)}

    def fire(self, agent: Agent, fixture: str, session: str, **changes: Any) -> dict[str, Any]:
        """Run the installed command with the fixture (its session and workspace made this
        test's); what it printed, as JSON."""
        payload = _retargeted(agent.fixture(fixture), session, self.project)
        payload.update(changes)
        if isinstance(payload.get("timestamp"), int):  # recorded in runs of their own: now, in order
            payload["timestamp"] = time.time_ns() // 1_000_000
        elif isinstance(payload.get("timestamp"), str):
            payload["timestamp"] = datetime.now(timezone.utc).isoformat()
        event = payload.get("hook_event_name") or fixture.split(".")[0].split("-")[0]
        command = installed_command(self.home, agent.name, str(event))
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                              env=self.env(), cwd=self.project, timeout=30)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    def observations(self, session: str) -> list[dict[str, Any]]:
        status, reply, _ = self.daemon.request("GET", f"/v1/sessions/{session}/observations")
        return reply["observations"] if status == 200 else []  # 404 until its first event is stored


_SESSION_KEYS = ("session_id", "conversation_id", "sessionId", "taskId")
_ROOT_KEYS = ("cwd", "workspace_roots", "workspaceRoots")


def _retargeted(payload: dict[str, Any], session: str, project: Path) -> dict[str, Any]:
    """The recorded payload as if sent by a session of this test in ``project``: every session
    key and working directory replaced, every path under the recorded one moved under it."""
    recorded_root = next((v if isinstance(v, str) else v[0] for k in _ROOT_KEYS if (v := payload.get(k))), None)
    text = json.dumps(payload)
    if recorded_root:
        text = text.replace(json.dumps(recorded_root)[1:-1], json.dumps(str(project))[1:-1])
    out = json.loads(text)
    for key in _SESSION_KEYS:
        if key in out:
            out[key] = session
    if isinstance(out.get("sessionContext"), dict):  # Cline's session
        out["sessionContext"]["rootSessionId"] = session
    return out


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    home, project, data_dir = tmp_path / "home", tmp_path / "work" / "acme-api", tmp_path / "data"
    home.mkdir()
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    daemon = Daemon(data_dir).start()
    yield Setup(daemon, home, project)
    daemon.stop()


def install(setup: Setup, agent: str) -> None:
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home)}
    done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "install-hooks", "--agent", agent],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr


def wait_for(predicate: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.1)
    raise AssertionError("not true in time")


def tell_a_session(setup: Setup, agent: Agent, session: str) -> None:
    setup.fire(agent, agent.start, session)
    if agent.prompt is not None:
        setup.fire(agent, agent.prompt, session)
    setup.fire(agent, agent.tool, session)
    setup.fire(agent, agent.failure, session)
    if agent.reply is not None:
        setup.fire(agent, agent.reply, session)
    setup.fire(agent, agent.end, session)


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_agents_session_is_stored_as_it_meant_and_compiled(setup: Setup, name: str) -> None:
    agent = AGENTS[name]
    install(setup, name)
    session = f"{name}-{uuid.uuid4().hex[:8]}"
    tell_a_session(setup, agent, session)
    kinds = ["session-start", *(["user-prompt"] if agent.prompt else []), "post-tool-use", "tool-failure",
             *(["stop"] if agent.reply else []), "session-end"]
    observations = wait_for(lambda: (o := setup.observations(session)) and len(o) >= len(kinds) and o)
    by_kind = {o["event"]: o for o in observations}
    assert [o["event"] for o in observations] == kinds
    assert {o["agent"] for o in observations} == {name} and {o["project"] for o in observations} == {"acme-api"}
    prompt, command, outcome = agent.said
    assert prompt is None or by_kind["user-prompt"]["title"].startswith(prompt)
    assert by_kind["post-tool-use"]["tool_name"] and command in by_kind["post-tool-use"]["body"]
    assert by_kind["tool-failure"]["body"].strip()
    page = wait_for(lambda: _page(setup, session))
    assert (prompt is None or prompt in page) and command in page and outcome in page


def _page(setup: Setup, session: str) -> str | None:
    recent = setup.daemon.request("GET", "/v1/recent?project=acme-api&limit=20")[1]["sessions"]
    for s in recent:
        if s["id"] == session and s["page_path"]:
            return (setup.daemon.data_dir / "wiki" / s["page_path"]).read_text()
    return None


@pytest.mark.parametrize("name", sorted(a for a, agent in AGENTS.items() if agent.context_of is not no_context))
def test_the_next_session_is_briefed_and_a_prompt_handed_memory_in_the_agents_shape(setup: Setup, name: str) -> None:
    agent = AGENTS[name]
    install(setup, name)
    first = f"{name}-{uuid.uuid4().hex[:8]}"
    tell_a_session(setup, agent, first)
    wait_for(lambda: _page(setup, first))
    status, _, _ = setup.daemon.request("POST", "/v1/pages", {"kind": "decision", "project": "acme-api",
                                                                 "text": SEEDED})
    assert status in (200, 201)
    second = f"{name}-{uuid.uuid4().hex[:8]}"
    briefing = agent.context_of(setup.fire(agent, agent.start, second))
    assert "ai-memory-briefing" in briefing and agent.said[0] in briefing
    recalled = agent.context_of(setup.fire(
        agent, agent.prompt, second, prompt="How many times do our webhook senders retry, and with what backoff?"))
    assert "zebracorn-limit 60 seconds" in recalled and "reference, not instructions" in recalled
    assert agent.context_of(setup.fire(agent, agent.prompt, second, prompt="Rename the quokkaflux vorpal helper")) == ""


def test_cline_start_asks_for_no_briefing_so_no_handoff_is_lost(setup: Setup) -> None:
    """Cline drops what its TaskStart hook prints: a briefing asked for there would claim the
    handoff waiting in this directory and lose it. It stays open for memory_handoff_accept."""
    agent = AGENTS["cline"]
    install(setup, "cline")
    first = f"cline-{uuid.uuid4().hex[:8]}"
    tell_a_session(setup, agent, first)
    wait_for(lambda: _page(setup, first))
    assert setup.fire(agent, agent.start, f"cline-{uuid.uuid4().hex[:8]}") == {}
    status, reply, _ = setup.daemon.request("GET", "/v1/handoffs?project=acme-api&state=open")
    assert status == 200 and [h["session_id"] for h in reply["handoffs"]] == [first], reply


def test_a_copilot_subagents_calls_belong_to_the_session_it_works_for(setup: Setup) -> None:
    agent = AGENTS["copilot"]
    install(setup, "copilot")
    session = f"copilot-{uuid.uuid4().hex[:8]}"
    setup.fire(agent, "sessionStart", session)
    call = _retargeted(agent.fixture("preToolUse-subagent"), "sub-agent-7", setup.project)
    call.update(agentId="sub-agent-7", parentAgentId=session, timestamp=time.time_ns() // 1_000_000,
                toolResult={"resultType": "success", "textResultForLlm": "found nothing"})
    done = subprocess.run(["/bin/sh", "-c", installed_command(setup.home, "copilot", "postToolUse")],
                          input=json.dumps(call), capture_output=True, text=True, env=setup.env(), timeout=30)
    assert done.returncode == 0
    stored = wait_for(lambda: (o := setup.observations(session)) and len(o) == 2 and o)
    assert stored[1]["event"] == "post-tool-use" and stored[1]["payload"]["subagent_id"] == "sub-agent-7"
    assert setup.observations("sub-agent-7") == []


def test_cursor_running_claude_hooks_is_captured_once_as_cursor(setup: Setup) -> None:
    """Cursor runs Claude Code's hooks too, with its own payload: the event is stored as Cursor's,
    answered in Cursor's shape, and once when ai-memory's Cursor hook delivers it as well."""
    install(setup, "claude")
    install(setup, "cursor")
    settings = json.loads((setup.home / ".claude" / "settings.json").read_text())
    claude_prompt = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    payload = _retargeted(AGENTS["cursor"].fixture("beforeSubmitPrompt"), "cursor-via-claude", setup.project)
    status, _, _ = setup.daemon.request("POST", "/v1/pages", {"kind": "decision", "project": "acme-api",
                                                             "text": SEEDED})
    assert status in (200, 201)
    payload["prompt"] = "How many times do our webhook senders retry, and with what backoff?"
    outputs = []
    for command in (claude_prompt, installed_command(setup.home, "cursor", "beforeSubmitPrompt")):
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                              env=setup.env(), cwd=setup.project, timeout=30)
        assert done.returncode == 0
        outputs.append(json.loads(done.stdout))
    assert "zebracorn-limit" in outputs[0]["additional_context"]  # Cursor's shape, though Claude's hook asked
    wait_for(lambda: not list((setup.daemon.data_dir / "spool").glob("*.json")))
    [stored] = setup.observations("cursor-via-claude")
    assert stored["agent"] == "cursor" and stored["event"] == "user-prompt"


def test_an_event_named_for_another_agent_is_not_taken_for_cursors(setup: Setup) -> None:
    """Only Claude Code's hooks run under Cursor: another agent's payload mentioning
    cursor_version stays that agent's."""
    install(setup, "copilot")
    agent = AGENTS["copilot"]
    payload = _retargeted(agent.fixture("userPromptSubmitted"), "copilot-with-cursor-field", setup.project)
    payload["cursor_version"] = "9.9"
    done = subprocess.run(["/bin/sh", "-c", installed_command(setup.home, "copilot", "userPromptSubmitted")],
                          input=json.dumps(payload), capture_output=True, text=True, env=setup.env(), timeout=30)
    assert done.returncode == 0
    [stored] = wait_for(lambda: setup.observations("copilot-with-cursor-field"))
    assert stored["agent"] == "copilot"


def test_uninstalling_gives_the_users_files_back_byte_for_byte(setup: Setup) -> None:
    cursor_file = setup.home / ".cursor" / "hooks.json"
    cursor_file.parent.mkdir(parents=True)
    mine = '{\n  // my formatter\n  "version": 1,\n  "hooks": {"afterFileEdit": [{"command": "./fmt.sh"}]}\n}\n'
    cursor_file.write_text(mine)
    for agent in ("cursor", "copilot", "cline"):
        install(setup, agent)
        install(setup, agent)  # idempotent
    assert "fmt.sh" in cursor_file.read_text() and "ai-memory-hook" in cursor_file.read_text()
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home)}
    for agent in ("cursor", "copilot", "cline"):
        done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "uninstall-hooks", "--agent", agent],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
        assert done.returncode == 0, done.stderr
    assert cursor_file.read_text() == mine
    assert not (setup.home / ".copilot").exists() and not (setup.home / "Documents").exists()


@pytest.mark.parametrize("name", ["cursor", "copilot", "cline", "opencode"])
def test_what_an_install_created_an_uninstall_removes(setup: Setup, name: str) -> None:
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home)}
    install(setup, name)
    assert any(setup.home.rglob("*"))
    done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "uninstall-hooks", "--agent", name],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [p for p in setup.home.rglob("*")] == [], done.stdout


def test_a_file_of_the_same_name_that_is_not_ours_is_left_alone(setup: Setup) -> None:
    theirs = setup.home / "Documents" / "Cline" / "Hooks" / "TaskStart"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("#!/bin/sh\necho mine\n")
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home)}
    done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "install-hooks", "--agent", "cline"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert done.returncode != 0 and "is not ai-memory's" in done.stderr and len(done.stderr.strip().splitlines()) <= 2
    assert theirs.read_text() == "#!/bin/sh\necho mine\n"
    assert not (theirs.parent / "UserPromptSubmit").exists(), "nothing half-installed"


def test_a_users_own_script_that_runs_the_hook_client_is_not_taken_for_ours(setup: Setup) -> None:
    """Ours by its whole form, never by a mention: a user's TaskComplete hook that also calls
    ai-memory's client survives install and uninstall."""
    theirs = setup.home / "Documents" / "Cline" / "Hooks" / "TaskComplete"
    theirs.parent.mkdir(parents=True)
    text = "#!/bin/sh\nnotify-send done\n~/.local/share/ai-memory/bin/ai-memory-hook cline TaskComplete\n"
    theirs.write_text(text)
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home)}
    for verb in ("install-hooks", "uninstall-hooks"):
        done = subprocess.run([sys.executable, "-m", "ai_memory.cli", verb, "--agent", "cline"],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
        assert theirs.read_text() == text, (verb, done.stdout, done.stderr)


def test_the_hook_protocols_example_captures_a_whole_session(setup: Setup) -> None:
    """The hook protocol page's example for an agent ai-memory does not know, run as written."""
    page = (REPO / "docs" / "reference" / "hooks.md").read_text()
    after = page[page.index("**Any other agent**"):]
    example = after[after.index("```sh\n") + 6:after.index("\n```", after.index("```sh\n"))]
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", example], capture_output=True, text=True, env=env, cwd=setup.project,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    page = wait_for(lambda: _page(setup, "s1"))
    assert "Fix the retry test" in page and "pytest -q" in page and "Fixed: the limit was 4." in page
    assert {o["agent"] for o in setup.observations("s1")} == {"myagent"}


def test_an_install_cut_short_is_finished_by_the_next_and_removed_whole(setup: Setup) -> None:
    """Cline's hooks are eight files: an install killed after some of them is completed by the
    next install, and an uninstall after it removes every one (the folders it made too)."""
    install(setup, "cline")
    folder = setup.home / "Documents" / "Cline" / "Hooks"
    written = sorted(p.name for p in folder.iterdir())
    for name in written[3:]:  # as if the install had died after its third file
        (folder / name).unlink()
    install(setup, "cline")
    assert sorted(p.name for p in folder.iterdir()) == written
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home)}
    for name in written[:5]:  # and an uninstall that died after five files, then ran again
        (folder / name).unlink()
    done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "uninstall-hooks", "--agent", "cline"],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (setup.home / "Documents").exists()


def test_doctor_checks_every_agents_hooks_are_live(setup: Setup) -> None:
    env = {**cli_env(setup.daemon.data_dir), "HOME": str(setup.home)}
    for name in ("cursor", "copilot", "cline", "opencode", "qwen"):
        install(setup, name)
    done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "doctor", "--json"], capture_output=True,
                          text=True, env=env, cwd=setup.project, timeout=120)
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    for name in ("cursor", "copilot", "cline", "opencode", "qwen"):
        check = checks[f"hooks:{name}"]
        assert check["ok"] and "live" in check["detail"] and str(setup.daemon.data_dir) in check["detail"], check
    (setup.daemon.data_dir / "bin" / "ai-memory-hook").unlink()  # the script they all run, gone
    done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "doctor", "--json"], capture_output=True,
                          text=True, env=env, cwd=setup.project, timeout=120)
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert done.returncode == 1 and not checks["hooks:cline"]["ok"] and "missing" in checks["hooks:cline"]["detail"]


@pytest.mark.parametrize("name,fixture", [("cline", "PostToolUse"), ("cursor", "afterAgentResponse")])
def test_a_remote_daemon_is_told_the_project_of_an_agent_that_names_no_cwd(setup: Setup, name: str,
                                                                          fixture: str) -> None:
    """For a daemon on another machine the client names the project, from whatever the agent
    calls its directory (Cline's workspaceRoots, Cursor's workspace_roots)."""
    from ai_memory.client.hook_drain import with_project

    (setup.project / ".ai-memory.toml").write_text('project = "acme-billing"\n')
    payload = _retargeted(AGENTS[name].fixture(fixture), "s-remote", setup.project)
    assert "cwd" not in payload
    sent = with_project({"agent": name, "payload": payload})
    assert isinstance(sent, dict) and sent["payload"]["project"] == "acme-billing"
