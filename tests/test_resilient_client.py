"""The resilient client against a real daemon behind a fault-injecting TCP proxy.

The proxy is on loopback, so ``client.resilient = always`` forces the remote behaviour on. The
client has its own data dir ("another machine") holding only the daemon's token.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ai_memory.client.breaker import Breaker
from ai_memory.client.hook_drain import drain_lock
from ai_memory.client.offline import ResilientAPI, open_api
from ai_memory.cli.common import settings_from
from ai_memory.client.resilient import ClientSettings, ResilientClient
from ai_memory.config import load_config
from ai_memory.core.errors import ConnectFailed, GatewayUnreachable, ResponseIncomplete, StorageError
from conftest import REPO, Daemon, cli_env, run_cli
from fault_proxy import FaultProxy, client_dir, proxy  # noqa: F401 (fixtures)

FAST = {"client.resilient": "always", "client.connect_timeout_ms": 500, "client.timeout_ms": 500,
        "client.breaker_base_ms": 1500, "client.breaker_max_ms": 10_000, "client.breaker_trip_after": 3,
        "client.retry_wait_max_ms": 50}


def settings(client_dir: Path, url: str, **overrides: object) -> ClientSettings:
    values = {**FAST, "client.url": url, **{k.replace("__", "."): v for k, v in overrides.items()}}
    return settings_from(load_config(client_dir, values, environ={}))


def client_env(client_dir: Path, url: str, **extra: str) -> dict[str, str]:
    env = {"AI_MEMORY_URL": url, **{f"AI_MEMORY_{k.upper().replace('.', '_')}": str(v) for k, v in FAST.items()}}
    return {**env, **extra}


def test_loopback_urls_keep_the_plain_client(client_dir: Path, daemon: Daemon) -> None:
    plain = settings(client_dir, daemon.url, client__resilient="auto")
    assert not plain.resilient and type(open_api(plain)).__name__ == "MemoryAPI"
    assert settings(client_dir, "http://10.1.2.3:49374", client__resilient="auto").resilient
    assert not settings(client_dir, "http://10.1.2.3:49374", client__resilient="never").resilient


def test_refused_opens_at_once_then_calls_skip_the_network(client_dir: Path, proxy: FaultProxy) -> None:
    api = open_api(settings(client_dir, proxy.url))
    assert api.status()["version"]
    proxy.set_mode("refuse")
    t0 = time.monotonic()
    with pytest.raises(ConnectFailed):
        api.status()
    assert time.monotonic() - t0 < 0.5, "a refused connect is definitive: no retry"
    proxy.set_mode("pass")  # the server is back, but the breaker must keep every call off the network
    before = proxy.connections
    for _ in range(100):
        t = time.monotonic()
        with pytest.raises(GatewayUnreachable) as info:
            api.status()
        assert (time.monotonic() - t) * 1000 < 1000  # no timeout waited; proxy.connections proves no network
        assert info.value.fields["error"] == "gateway_unreachable" and info.value.fields["breaker_open"] is True
        assert 0 < info.value.retry_in_ms <= 1500
    assert proxy.connections == before
    time.sleep(1.6)  # the window passes: the next call is a probe, and one success closes the breaker
    assert api.status()["version"]
    state = Breaker(client_dir / "client", proxy.url, api.settings.policy).read()
    assert (state.trips, state.failures, state.open_until_ms) == (0, 0, 0)


def test_new_processes_respect_the_breaker_and_can_reset_it(client_dir: Path, proxy: FaultProxy) -> None:
    proxy.set_mode("refuse")
    with pytest.raises(ConnectFailed):
        open_api(settings(client_dir, proxy.url, client__breaker_base_ms=60_000, client__breaker_max_ms=60_000)).status()
    proxy.set_mode("pass")
    env = client_env(client_dir, proxy.url, AI_MEMORY_CLIENT_BREAKER_BASE_MS="60000",
                     AI_MEMORY_CLIENT_BREAKER_MAX_MS="60000")
    shown = run_cli(client_dir, "breaker", "--json", **env)
    state = json.loads(shown.stdout)
    assert state["breaker_open"] and state["state"] == "open" and state["retry_in_ms"] > 50_000
    done = run_cli(client_dir, "read", "anything/x.md", **env)
    assert done.returncode == 1 and "circuit breaker open" in done.stderr
    assert proxy.connections == 0
    assert json.loads(run_cli(client_dir, "breaker", "--reset", "--json", **env).stdout)["state"] == "closed"
    assert run_cli(client_dir, "meta", "--all", **env).returncode == 0 and proxy.connections == 1


def test_each_new_trip_doubles_the_window_up_to_the_max(client_dir: Path, proxy: FaultProxy) -> None:
    s = settings(client_dir, proxy.url, client__breaker_base_ms=200, client__breaker_max_ms=500)
    api = open_api(s)
    proxy.set_mode("refuse")
    windows = []
    for _ in range(3):
        with pytest.raises(ConnectFailed):
            api.status()
        state = s.breaker().read()
        windows.append(state.open_until_ms - state.opened_at_ms)
        time.sleep(state.retry_in_ms(s.breaker().now_ms()) / 1000 + 0.05)
    assert windows == [200, 400, 500]


def test_changing_the_url_resets_and_a_corrupt_file_reads_closed(client_dir: Path, proxy: FaultProxy) -> None:
    proxy.set_mode("refuse")
    s = settings(client_dir, proxy.url)
    with pytest.raises(ConnectFailed):
        open_api(s).status()
    assert s.breaker().open_for_ms() > 0
    other = settings(client_dir, "http://127.0.0.2:1")
    assert other.breaker().open_for_ms() == 0
    (client_dir / "client" / "breaker.json").write_text("{not json")
    assert s.breaker().open_for_ms() == 0


def test_blackholed_connect_times_out_once_and_opens(client_dir: Path, proxy: FaultProxy) -> None:
    api = open_api(settings(client_dir, proxy.url))
    proxy.set_mode("blackhole")
    t0 = time.monotonic()
    with pytest.raises(ConnectFailed):
        api.status()
    elapsed = time.monotonic() - t0
    assert 0.45 < elapsed < 1.0, f"one connect timeout of 0.5 s, not retries: {elapsed:.2f} s"
    t1 = time.monotonic()
    with pytest.raises(GatewayUnreachable):
        api.status()
    assert time.monotonic() - t1 < 0.005


def test_three_5xx_in_a_row_open_the_breaker(client_dir: Path, proxy: FaultProxy) -> None:
    api = open_api(settings(client_dir, proxy.url))
    proxy.set_mode("5xx")
    with pytest.raises(StorageError):
        api.status()  # a read: retried (Retry-After: 0) until the third failure trips the breaker
    assert proxy.connections == 3
    with pytest.raises(GatewayUnreachable):
        api.status()
    assert proxy.connections == 3


def test_a_single_5xx_is_retried_and_does_not_open(client_dir: Path, proxy: FaultProxy) -> None:
    s = settings(client_dir, proxy.url)
    proxy.set_mode("5xx")
    client = ResilientClient(s)
    assert client.request("POST", "/v1/handoffs", {"summary": "x"}).status == 503  # not repeatable: one try
    assert proxy.connections == 1 and s.breaker().read().failures == 1
    proxy.set_mode("pass")
    assert client.get("/status").status == 200
    assert s.breaker().read().failures == 0


def test_a_slow_body_is_an_error_never_an_empty_result(client_dir: Path, proxy: FaultProxy) -> None:
    s = settings(client_dir, proxy.url)
    proxy.set_mode("slow_body")
    t0 = time.monotonic()
    with pytest.raises(ResponseIncomplete):
        ResilientClient(s).request("POST", "/v1/query", {"q": "anything"})
    assert time.monotonic() - t0 < 3.0
    assert s.breaker().open_for_ms() > 0, "three unfinished answers in a row trip it"
    s.breaker().reset()
    reply = open_api(settings(client_dir, proxy.url, client__breaker_trip_after=1)).query("anything", project="p")
    assert reply["fallback"] == "local" and "did not finish" in reply["note"], reply


def test_a_slow_but_working_path_succeeds(client_dir: Path, proxy: FaultProxy) -> None:
    proxy.set_mode("delay", delay_s=0.3)  # a VPN needing a moment is not a failure
    api = open_api(settings(client_dir, proxy.url, client__connect_timeout_ms=2000))
    assert api.status()["version"]
    proxy.set_mode("delay", delay_s=1.0)  # headers later than the connect budget: ambiguous, retried
    with pytest.raises(ResponseIncomplete):
        open_api(settings(client_dir, proxy.url, client__breaker_trip_after=1)).status()


def test_search_falls_back_to_seen_results_with_and_then_or(client_dir: Path, proxy: FaultProxy) -> None:
    api = open_api(settings(client_dir, proxy.url))
    stored = api.write(text="Webhook senders retry five times with exponential backoff.", kind="decision",
                       project="acme")
    assert stored["created"] and not stored.get("pending")
    assert api.query("webhook backoff", project="acme")["hits"], "the server found it (and the client saw it)"
    proxy.set_mode("refuse")
    local = api.query("webhook backoff", project="acme")
    assert local["fallback"] == "local" and local["lexical"] and local["match"] == "and"
    assert [h["path"] for h in local["hits"]] == [stored["path"]]
    either = api.query("webhook zeppelin", project="acme")
    assert either["match"] == "or" and "any of them" in either["note"] and either["hits"]
    assert api.query("webhook", project="other")["hits"] == []


def test_search_falls_back_to_the_local_wiki_copy(client_dir: Path, proxy: FaultProxy) -> None:
    page = client_dir / "wiki" / "acme" / "gotchas" / "clock-skew.md"
    page.parent.mkdir(parents=True)
    page.write_text("---\ntitle: Clock skew breaks token refresh\ntype: Gotcha\n---\nNTP must run on workers.\n")
    proxy.set_mode("refuse")
    found = open_api(settings(client_dir, proxy.url)).query("ntp workers", project="acme")
    assert found["fallback"] == "local"
    assert found["hits"][0]["title"] == "Clock skew breaks token refresh" and found["hits"][0]["source"] == "wiki"


def test_cli_search_labels_the_fallback(client_dir: Path, proxy: FaultProxy) -> None:
    proxy.set_mode("refuse")
    done = run_cli(client_dir, "search", "anything at all", "--project", "acme", **client_env(client_dir, proxy.url))
    assert done.returncode == 0
    assert "fallback: local (lexical, not semantic)" in done.stdout and "no matches" in done.stdout, done


def _fire_python_hook(client_dir: Path, url: str, payload: dict) -> tuple[subprocess.CompletedProcess[str], float]:
    env = cli_env(client_dir, **client_env(client_dir, url))
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ai_memory.cli", "hook", "--agent", "codex"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=30)
    return done, time.monotonic() - t0


def _wait(predicate, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def test_remote_hooks_spool_then_one_drain_delivers(client_dir: Path, proxy: FaultProxy, daemon: Daemon) -> None:
    proxy.set_mode("refuse")
    for i in range(3):
        done, _ = _fire_python_hook(client_dir, proxy.url, {"session_id": "remote-1", "hook_event_name": "Stop",
                                                             "cwd": str(client_dir), "n": i})
        assert done.returncode == 0 and done.stdout.strip() == "{}"
    spool = client_dir / "spool"
    _wait(lambda: Breaker(client_dir / "client", proxy.url, settings(client_dir, proxy.url).policy).open_for_ms() > 0)
    assert len(list(spool.glob("*.json"))) == 3, "nothing is lost while the server is away"
    proxy.set_mode("pass")
    env = client_env(client_dir, proxy.url)
    assert proxy.connections == 0
    with drain_lock(client_dir / "client"):  # a drain already running: a second one leaves at once
        busy = json.loads(run_cli(client_dir, "hook", "--drain", **env).stdout)
    assert busy["busy"] and busy["delivered"] == 0
    run_cli(client_dir, "breaker", "--reset", **env)
    drained = json.loads(run_cli(client_dir, "hook", "--drain", **env).stdout)
    assert drained["delivered"] == 3 and drained["left"] == 0 and not list(spool.glob("*.json"))
    observations = daemon.request("GET", "/v1/sessions/remote-1/observations")[1]["observations"]
    assert len(observations) == 3


def test_remote_shell_hook_only_spools(client_dir: Path, proxy: FaultProxy) -> None:
    env = cli_env(client_dir, **client_env(client_dir, proxy.url), PATH="/usr/bin:/bin")  # no ai-memory on PATH
    done = subprocess.run([str(REPO / "hooks" / "ai-memory-hook"), "codex"], input='{"session_id": "sh-1"}',
                          capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "{}"
    time.sleep(0.3)
    assert len(list((client_dir / "spool").glob("*.json"))) == 1 and proxy.connections == 0


def test_the_shell_hook_reads_the_client_section_of_config_toml(client_dir: Path, proxy: FaultProxy,
                                                                daemon: Daemon) -> None:
    """No environment, only config.toml: its [client] url and resilient settings win over the
    [server] port, as they do for the Python client (else the hook would post to localhost)."""
    (client_dir / "config.toml").write_text(
        f"[server]\nport = {daemon.port}  # a daemon here too\n\n[client]\nurl = '{proxy.url}'\n"
        f"resilient = \"Always\"\n")
    env = cli_env(client_dir, PATH="/usr/bin:/bin")
    # a Stop: it asks the daemon nothing (a prompt asks for prompt recall)
    stop = {"session_id": "sh-conf", "hook_event_name": "Stop", "last_assistant_message": "hello", "cwd": "/tmp"}
    done = subprocess.run([str(REPO / "hooks" / "ai-memory-hook"), "codex"], input=json.dumps(stop),
                          capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "{}"
    time.sleep(0.5)
    assert len(list((client_dir / "spool").glob("*.json"))) == 1 and proxy.connections == 0
    status, body, _ = daemon.request("GET", "/v1/sessions/sh-conf/observations")
    assert status == 404, body  # the local daemon never heard of the session


def test_resilient_api_flushes_nothing_without_an_outbox(client_dir: Path, proxy: FaultProxy) -> None:
    api = open_api(settings(client_dir, proxy.url))
    assert isinstance(api, ResilientAPI) and not (client_dir / "client" / "outbox.sqlite").exists()
