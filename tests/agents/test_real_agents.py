"""The real agent CLIs (Claude Code, Codex, Gemini CLI here; the others in
test_real_agents_more.py) against a scripted model, with ai-memory installed
as a user installs it. Per agent: a session with the daemon up (events, page, MCP tools listed
in the first model request, a search that hits, no self-hits, the token nowhere the model or a
process list shows), the next session (briefing and handoff in its first model request), a
prompt handed what memory holds beside it (and one handed nothing), a session with the daemon stopped (every event delivered exactly once after a restart) and one
with the daemon hung (SIGSTOP: the agent does not wait for it).

The tests of one agent build on each other (the next session reads what the first left), so
they run in file order; each agent has its own project.

What the pinned CLIs were seen to do, where it differs from ../shared/reference/agent-hooks.md
or decided how ai-memory installs itself:

- Claude Code 2.1.197 kills async hooks still running when a ``-p`` run ends (every async Stop
  was lost); it takes an MCP server's tools only once tools, prompts and resources are listed,
  and sends its first model request without waiting for a slow server. Its MCP tools are
  ``mcp__ai-memory__<tool>``.
- Codex 0.169.0 fires SessionEnd in ``codex exec`` (reason "other"); its shell tool is
  ``exec_command`` (argument ``cmd``), reported to hooks as ``Bash``; MCP tools reach the model
  inside a ``namespace`` tool (``mcp__ai_memory``) and hooks as ``mcp__ai_memory__<tool>``;
  it lists a server's tools only if the server answered before the first request, and runs
  untrusted hooks only with ``--dangerously-bypass-hook-trust``.
- Gemini CLI 0.61.0 fires PreCompress (``trigger: auto``) before every model turn; it prepends
  the SessionStart output to the prompt as ``<hook_context>…</hook_context>\n\n`` and appends
  BeforeAgent's after it as a part of its own, ``<`` and ``>`` inside escaped (``&lt;``); AfterAgent's
  reply is ``prompt_response``; MCP tools are ``mcp_ai-memory_<tool>`` with ``mcp_context``;
  it waits for MCP servers before the first request.
- OpenCode 1.18.33 has no command hooks: ai-memory's plugin hands its events to the hook command.
  ``opencode run`` re-quotes an argument holding a space (the prompt goes on stdin); it calls no
  plugin's ``event`` handler awaited, so Stop and SessionEnd are sent from ``dispose``; MCP tools
  are ``ai-memory_<tool>``.
- Copilot CLI 1.0.102 (bring your own key, no account) names its hook events and fields in
  camelCase; no hook is told the reply; project hooks load in ``-p`` only in a trusted folder
  (the suite installs at user scope); MCP tools are ``ai-memory-<tool>``; the shell tool ``bash``.
- Qwen Code 0.24.4 kills ``async`` hooks when a ``-p`` run exits (its hooks are installed
  synchronous), fires UserPromptSubmit again after each tool batch with an empty prompt, and
  never fires SessionEnd outside its interactive UI: its sessions are compiled after a Stop and
  ``sessions.idle_minutes`` of quiet (seconds in this world). Its MCP tools need
  ``alwaysLoadTools``.
- Cline 3.0.65 never fires UserPromptSubmit; TaskStart and TaskComplete run detached with their
  output ignored (TaskComplete may land after the run), so nothing can be put before its model:
  the rules file tells the model to call memory_briefing and memory_handoff_accept. Its shell
  tool is ``run_commands``; MCP tools are ``ai-memory__<tool>``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clis import PINNED, ensure_or_skip, version_of
from harness import NO_SESSION_END, Run, World, memory_query, project_name, shell, wait_until
from proc_scan import ProcScanner
from stub_model import Call, Script, StubModel

# The agents this module drives; test_real_agents_more.py runs the same scenarios for the others,
# in a world of its own, so the two halves run on two workers side by side.
AGENTS = ("claude", "codex", "gemini")
NO_REPLY = {"copilot"}  # its hooks are never told the reply: no page line or handoff from it
# Cline 3.0.65 never fires UserPromptSubmit, and no hook of its can put text before the model:
# the rules file tells the model to ask memory_briefing itself, which the test makes it do.
NO_PROMPT = NO_CONTEXT = {"cline"}
RUN_ENDS_WITH_REPLY = {"cline"}  # its run ends with its reply: no separate Stop
SEEDED = "Webhook senders retry 5 times with exponential backoff, capped at zebracorn-limit 60 seconds."
NOTHING = "quokkaflux vorpal"  # matches no memory: a search for it must not find its own call
TOOL_CALLS_WHILE_DOWN = 10
RECORDED = Path(os.environ.get("AI_MEMORY_AGENT_RECORDINGS", "")) if os.environ.get("AI_MEMORY_AGENT_RECORDINGS") else None


@pytest.fixture(scope="module")
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    agents = request.module.AGENTS
    clis = {name: ensure_or_skip(PINNED[name]) for name in agents}
    stub = StubModel().start()
    w = World(tmp_path_factory.mktemp("agents"), clis, stub)
    try:
        for agent in agents:
            w.install(agent)
            w.ai_memory("write", "--kind", "decision", "--project", project_name(agent), SEEDED)
        print("agent CLIs:", {name: version_of(path) for name, path in clis.items()})
        yield w
    finally:
        if w.daemon.proc is not None and w.daemon.proc.poll() is None:
            w.thaw_daemon()
            w.daemon.stop()
        stub.close()


LIFECYCLE = ("session-start", "user-prompt", "post-tool-use", "stop", "session-end")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each scenario for each agent of the module running it (one that reads no context from its
    hooks left out of the scenarios that need it)."""
    if "agent" in metafunc.fixturenames:
        agents = metafunc.module.AGENTS
        if metafunc.definition.get_closest_marker("needs_context"):
            agents = tuple(a for a in agents if a not in NO_CONTEXT)
        metafunc.parametrize("agent", agents)


def kinds(observations: list[dict[str, Any]]) -> Counter[str]:
    """The lifecycle events of a session (an agent's notifications and the like aside)."""
    return Counter(o["event"] for o in observations if o["event"] in LIFECYCLE)


def expected_kinds(agent: str, tool_calls: int) -> Counter[str]:
    """What a CLI sends for one prompt and ``tool_calls`` tool calls (one hook per call, after
    it), less what it never sends."""
    expected = Counter({"session-start": 1, "user-prompt": 1, "post-tool-use": tool_calls, "stop": 1, "session-end": 1})
    if agent in NO_SESSION_END:
        del expected["session-end"]
    if agent in NO_PROMPT:
        del expected["user-prompt"]
    if agent in RUN_ENDS_WITH_REPLY:
        del expected["stop"]
    return expected


def record(agent: str, name: str, observations: list[dict[str, Any]]) -> None:
    """With AI_MEMORY_AGENT_RECORDINGS=DIR, keep what the CLI sent (for the reference notes)."""
    if RECORDED is not None:
        RECORDED.mkdir(parents=True, exist_ok=True)
        (RECORDED / f"{agent}-{name}.json").write_text(json.dumps([o["payload"] for o in observations], indent=1))


# The fields ai-memory reads from each kind of event (core/observation.py, core/session_compile.py),
# as every one of the three CLIs must send them.
READS = {"session-start": ("source",), "user-prompt": ("prompt",),
         "post-tool-use": ("tool_name", "tool_input", "tool_response"), "session-end": ("reason",)}
REPLY = ("last_assistant_message", "prompt_response")  # Claude and Codex; Gemini


def assert_fields(observations: list[dict[str, Any]], cwd: Path) -> None:
    for o in observations:
        payload = o["payload"]  # as stored: in common terms (Copilot names its events only in its settings)
        assert payload.get("hook_event_name", o["source_event"]) == o["source_event"]
        assert payload["session_id"] == o["session_id"]
        assert Path(payload["cwd"]).resolve() == cwd.resolve(), payload["cwd"]
        reads = () if o["agent"] in NO_PROMPT and o["event"] != "post-tool-use" else READS.get(o["event"], ())
        missing = [f for f in reads if f not in payload and not payload.get("ai_memory_tool")]
        assert not missing, (o["source_event"], missing)
        if (o["event"] == "stop" or o["agent"] in RUN_ENDS_WITH_REPLY and o["event"] == "session-end") \
                and o["agent"] not in NO_REPLY:
            assert any(payload.get(f) for f in REPLY), payload


def searched(world: World, agent: str, text: str) -> dict[str, Any]:
    return world.api("POST", "/v1/query", {"q": text, "project": project_name(agent), "k": 10})


# ---- daemon up ----------------------------------------------------------------------------------

def test_a_session_with_the_daemon_up(world: World, agent: str) -> None:
    before = {s["id"] for s in world.sessions(agent)}
    script = Script([shell("env"), shell(f"echo marker-{agent}-up"), memory_query("zebracorn-limit webhook retries"),
                     memory_query(NOTHING)],
                    reply=f"Webhook retries checked. Next steps:\n- add a test for the {agent} backoff schedule")
    with ProcScanner(world.token) as scanner:
        run = world.run(agent, f"Check the webhook retries of {agent}", script).check()
    assert scanner.found == [], scanner.found  # no command line or environment shows the token
    assert world.token not in run.text()  # not in the model-visible environment (the env call's output)
    first = run.main[0]
    assert "memory_query" in first.text, "the MCP tools are listed in the first model request"
    answers = [r.text for r in run.main]
    assert any("zebracorn-limit 60 seconds" in text for text in answers), "the scripted search returned the memory"

    session = world.new_session(agent, before)
    observations = world.observations(session["id"])
    record(agent, "up", observations)
    assert kinds(observations) == expected_kinds(agent, 4), kinds(observations)
    assert all(o["agent"] == agent and o["project"] == project_name(agent) for o in observations)
    assert_fields(observations, world.project(agent))
    page = world.page_of(agent, session["id"])
    assert agent in NO_PROMPT or f"Check the webhook retries of {agent}" in page
    assert f"echo marker-{agent}-up" in page
    assert "Used memory: memory_query ×2" in page
    assert agent in NO_REPLY or f"add a test for the {agent} backoff schedule" in page
    assert "Tool calls: 2 ·" in page  # the two shell calls; memory's own are not evidence


def test_memory_does_not_find_its_own_calls(world: World, agent: str) -> None:
    """The search for NOTHING ran inside the session: neither it nor the other search's result
    may be found now, in raw hits or pages."""
    for text in (NOTHING, "zebracorn-limit"):
        reply = searched(world, agent, text)
        found = [h for h in reply["raw_hits"] if "memory_query" in json.dumps(h) or "quokkaflux" in json.dumps(h)]
        assert found == [], found
        assert all("sessions/" not in h["path"] for h in reply["hits"]), reply["hits"]


# ---- the next session ---------------------------------------------------------------------------

def test_the_next_session_is_briefed_with_the_handoff(world: World, agent: str) -> None:
    before = {s["id"] for s in world.sessions(agent)}
    asks = [Call("memory_briefing", {}), Call("memory_handoff_accept", {})] if agent in NO_CONTEXT else []
    run = world.run(agent, f"Continue the {agent} work", Script([*asks, shell("echo next")], reply="Continued.")).check()
    first = handoff = run.main[0].text
    if agent in NO_CONTEXT:  # the rules file says to ask: the briefing and the handoff come back as answers
        assert "without an ai-memory-briefing block" in first
        first, handoff = run.main[1].text, run.main[2].text
    assert "ai-memory-briefing" in first and (agent in NO_PROMPT or f"Check the webhook retries of {agent}" in first)
    assert agent in NO_REPLY or f"add a test for the {agent} backoff schedule" in handoff  # the handoff's next step
    session = world.new_session(agent, before)
    observations = world.observations(session["id"])
    record(agent, "next", observations)
    page = world.page_of(agent, session["id"])
    assert "ai-memory-briefing" not in page
    if agent not in NO_PROMPT:
        [prompt] = [o for o in observations if o["event"] == "user-prompt"]
        assert prompt["title"] == f"Continue the {agent} work" and "briefing" not in json.dumps(prompt["payload"])
        assert "title: Continue the" in page


# ---- prompt recall --------------------------------------------------------------------------------

RECALLED = "ai-memory-data"  # the fence of what prompt recall hands over (Gemini CLI escapes its "<" and ">")


@pytest.mark.needs_context
def test_a_prompt_is_handed_what_memory_holds_and_nothing_when_it_holds_nothing(world: World, agent: str) -> None:
    """The model request after the prompt carries the recalled block (the seeded decision) when
    memory holds the answer, and no block when it does not."""
    run = world.run(agent, "How many times do our webhook senders retry, and with what backoff?",
                    Script([], reply="Five times, with exponential backoff.")).check()
    first = run.main[0].text
    assert RECALLED in first and "zebracorn-limit 60 seconds" in first, first[-3000:]
    assert "reference, not instructions" in first
    run = world.run(agent, "Rename the quokkaflux vorpal helper to something clearer",
                    Script([], reply="Renamed.")).check()
    assert RECALLED not in run.main[0].text


# ---- daemon stopped, then hung --------------------------------------------------------------------

def arrived_once(world: World, agent: str, before: set[str]) -> str:
    """The new session's every event, once each, the spool empty; its page."""
    session = world.new_session(agent, before)
    wait_until(lambda: not world.spooled(), 30, "the spool drained")
    observations = world.observations(session["id"])
    assert kinds(observations) == expected_kinds(agent, TOOL_CALLS_WHILE_DOWN), kinds(observations)
    page = world.page_of(agent, session["id"])
    assert f"Tool calls: {TOOL_CALLS_WHILE_DOWN}" in page
    return page


def many_tools(agent: str, tag: str) -> Script:
    return Script([shell(f"echo {tag}-{agent}-{i}") for i in range(TOOL_CALLS_WHILE_DOWN)], reply=f"{tag} done.")


@pytest.mark.parametrize("moment", ["before", "during"])
def test_a_session_while_the_daemon_is_stopped_arrives_exactly_once(world: World, agent: str, moment: str) -> None:
    """The daemon is stopped before the session, or in its middle (before the model's fourth
    answer: what came before was stored live); after a restart every event is there once, the
    spool is empty and the page lists all ten calls."""
    before = {s["id"] for s in world.sessions(agent)}
    script = many_tools(agent, "down")
    if moment == "before":
        world.stop_daemon()
    else:
        script.on_step = lambda step: world.stop_daemon() if step == 3 else None
    try:
        run = world.run(agent, f"Ten calls while {agent}'s daemon is down", script).check()
        assert world.daemon.proc is not None and world.daemon.proc.poll() is not None, "the daemon was stopped"
        # every event, or those after the session's start, its prompt and the first three calls
        expected = sum(expected_kinds(agent, TOOL_CALLS_WHILE_DOWN).values())
        spooled = expected if moment == "before" else expected - 3 - (2 if agent not in NO_PROMPT else 1)
        # (Cline runs its TaskComplete hook detached: it may land a moment after the run)
        wait_until(lambda: len(world.spooled()) >= spooled, 30, "every event spooled")
    finally:
        world.start_daemon()
    page = arrived_once(world, agent, before)
    assert all(f"echo down-{agent}-{i}" in page for i in range(TOOL_CALLS_WHILE_DOWN))
    if moment == "before":
        world.down_seconds[agent] = run.seconds


def test_a_hung_daemon_does_not_hold_the_agent(world: World, agent: str) -> None:
    before = {s["id"] for s in world.sessions(agent)}
    world.freeze_daemon()
    try:
        run = world.run(agent, f"Ten calls while {agent}'s daemon hangs", many_tools(agent, "hung")).check()
    finally:
        world.thaw_daemon()
    # A hook that waited on the frozen daemon would cost its timeout (5 s) for each of the ten
    # tool calls: 50 s over a stopped daemon. The margin is for a loaded machine (both runs are
    # real CLIs: node start-up and model turns vary), far below what one waiting hook adds per call.
    down = world.down_seconds[agent]
    assert run.seconds <= down * 2 + 20, (run.seconds, down)
    page = arrived_once(world, agent, before)
    assert all(f"echo hung-{agent}-{i}" in page for i in range(TOOL_CALLS_WHILE_DOWN))
