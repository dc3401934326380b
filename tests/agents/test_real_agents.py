"""The real Claude Code, Codex and Gemini CLIs against a scripted model, with ai-memory installed
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
from harness import Run, World, memory_query, project_name, shell, wait_until
from proc_scan import ProcScanner
from stub_model import Script, StubModel

AGENTS = tuple(PINNED)
SEEDED = "Webhook senders retry 5 times with exponential backoff, capped at zebracorn-limit 60 seconds."
NOTHING = "quokkaflux vorpal"  # matches no memory: a search for it must not find its own call
TOOL_CALLS_WHILE_DOWN = 10
RECORDED = Path(os.environ.get("AI_MEMORY_AGENT_RECORDINGS", "")) if os.environ.get("AI_MEMORY_AGENT_RECORDINGS") else None


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    clis = {name: ensure_or_skip(cli) for name, cli in PINNED.items()}
    stub = StubModel().start()
    w = World(tmp_path_factory.mktemp("agents"), clis, stub)
    try:
        for agent in AGENTS:
            w.install(agent)
            w.ai_memory("write", "--kind", "decision", "--project", project_name(agent), SEEDED)
        print("agent CLIs:", {name: version_of(path) for name, path in clis.items()})
        yield w
    finally:
        if w.daemon.proc is not None and w.daemon.proc.poll() is None:
            w.thaw_daemon()
            w.daemon.stop()
        stub.close()


def kinds(observations: list[dict[str, Any]]) -> Counter[str]:
    return Counter(o["event"] for o in observations)


def expected_kinds(tool_calls: int) -> Counter[str]:
    """What each of the three CLIs sends for one prompt and ``tool_calls`` tool calls (one hook
    per call, after it)."""
    return Counter({"session-start": 1, "user-prompt": 1, "post-tool-use": tool_calls, "stop": 1, "session-end": 1})


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
        payload = o["payload"]
        assert payload["hook_event_name"] == o["source_event"] and payload["session_id"] == o["session_id"]
        assert Path(payload["cwd"]).resolve() == cwd.resolve(), payload["cwd"]
        missing = [f for f in READS.get(o["event"], ()) if f not in payload and not payload.get("ai_memory_tool")]
        assert not missing, (o["source_event"], missing)
        if o["event"] == "stop":
            assert any(payload.get(f) for f in REPLY), payload


def searched(world: World, agent: str, text: str) -> dict[str, Any]:
    return world.api("POST", "/v1/query", {"q": text, "project": project_name(agent), "k": 10})


# ---- daemon up ----------------------------------------------------------------------------------

@pytest.mark.parametrize("agent", AGENTS)
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
    assert kinds(observations) == expected_kinds(4), kinds(observations)
    assert all(o["agent"] == agent and o["project"] == project_name(agent) for o in observations)
    assert_fields(observations, world.project(agent))
    page = world.page_of(agent, session["id"])
    assert f"Check the webhook retries of {agent}" in page and f"echo marker-{agent}-up" in page
    assert f"add a test for the {agent} backoff schedule" in page and "Used memory: memory_query ×2" in page
    assert "Tool calls: 2 ·" in page  # the two shell calls; memory's own are not evidence


@pytest.mark.parametrize("agent", AGENTS)
def test_memory_does_not_find_its_own_calls(world: World, agent: str) -> None:
    """The search for NOTHING ran inside the session: neither it nor the other search's result
    may be found now, in raw hits or pages."""
    for text in (NOTHING, "zebracorn-limit"):
        reply = searched(world, agent, text)
        found = [h for h in reply["raw_hits"] if "memory_query" in json.dumps(h) or "quokkaflux" in json.dumps(h)]
        assert found == [], found
        assert all("sessions/" not in h["path"] for h in reply["hits"]), reply["hits"]


# ---- the next session ---------------------------------------------------------------------------

@pytest.mark.parametrize("agent", AGENTS)
def test_the_next_session_is_briefed_with_the_handoff(world: World, agent: str) -> None:
    before = {s["id"] for s in world.sessions(agent)}
    run = world.run(agent, f"Continue the {agent} work", Script([shell("echo next")], reply="Continued.")).check()
    first = run.main[0].text
    assert "ai-memory-briefing" in first and f"Check the webhook retries of {agent}" in first
    assert f"add a test for the {agent} backoff schedule" in first  # the handoff's next step
    session = world.new_session(agent, before)
    observations = world.observations(session["id"])
    record(agent, "next", observations)
    [prompt] = [o for o in observations if o["event"] == "user-prompt"]
    assert prompt["title"] == f"Continue the {agent} work" and "briefing" not in json.dumps(prompt["payload"])
    page = world.page_of(agent, session["id"])
    assert "title: Continue the" in page and "ai-memory-briefing" not in page


# ---- prompt recall --------------------------------------------------------------------------------

RECALLED = "ai-memory-data"  # the fence of what prompt recall hands over (Gemini CLI escapes its "<" and ">")


@pytest.mark.parametrize("agent", AGENTS)
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
    assert kinds(observations) == expected_kinds(TOOL_CALLS_WHILE_DOWN), kinds(observations)
    page = world.page_of(agent, session["id"])
    assert f"Tool calls: {TOOL_CALLS_WHILE_DOWN}" in page
    return page


def many_tools(agent: str, tag: str) -> Script:
    return Script([shell(f"echo {tag}-{agent}-{i}") for i in range(TOOL_CALLS_WHILE_DOWN)], reply=f"{tag} done.")


@pytest.mark.parametrize("moment", ["before", "during"])
@pytest.mark.parametrize("agent", AGENTS)
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
        assert len(world.spooled()) >= (TOOL_CALLS_WHILE_DOWN + 4 if moment == "before" else 9)
    finally:
        world.start_daemon()
    page = arrived_once(world, agent, before)
    assert all(f"echo down-{agent}-{i}" in page for i in range(TOOL_CALLS_WHILE_DOWN))
    if moment == "before":
        world.down_seconds[agent] = run.seconds


@pytest.mark.parametrize("agent", AGENTS)
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
