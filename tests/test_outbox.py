"""The offline outbox: writes made while the server is down are searchable at once, and reach the
server exactly once after recovery, with corrections remapped to the server's ids."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ai_memory.client.offline import ResilientAPI, open_api
from ai_memory.client.outbox import Outbox
from ai_memory.cli.common import settings_from
from ai_memory.config import load_config
from conftest import Daemon, run_cli
from fault_proxy import FaultProxy, client_dir, proxy  # noqa: F401 (fixtures)

FAST = {"client.resilient": "always", "client.connect_timeout_ms": 1000, "client.timeout_ms": 10_000,
        "client.breaker_base_ms": 800, "client.breaker_max_ms": 800, "client.retry_wait_max_ms": 50}
WRITES = 200
CORRECTIONS = 10


def api_for(client_dir: Path, url: str) -> ResilientAPI:
    s = settings_from(load_config(client_dir, {**FAST, "client.url": url}, environ={}))
    api = open_api(s)
    assert isinstance(api, ResilientAPI)
    return api


def env_for(url: str) -> dict[str, str]:
    return {"AI_MEMORY_URL": url, **{f"AI_MEMORY_{k.upper().replace('.', '_')}": str(v) for k, v in FAST.items()}}


def fact(i: int) -> str:
    return f"The widget{i} service listens on port {9000 + i} behind the gateway."


def test_offline_writes_are_local_at_once_and_reach_the_server_exactly_once(
        client_dir: Path, proxy: FaultProxy, daemon: Daemon) -> None:
    api = api_for(client_dir, proxy.url)
    twin = api.write(text="Deploys happen on Tuesdays only.", kind="rule", project="acme")  # on the server already
    proxy.set_mode("refuse")
    t0 = time.monotonic()
    queued = [api.write(text=fact(i), kind="fact", project="acme") for i in range(WRITES)]
    corrections = [api.write(text=fact(i).replace("port", "TLS port"), kind="fact", project="acme",
                             supersedes=queued[i]["id"], supersede_reason="moved to TLS") for i in range(CORRECTIONS)]
    duplicate = api.write(text="Deploys happen on Tuesdays only.", kind="rule", project="acme")
    invalid = api.write(text="A memory of an unknown kind.", kind="not-a-kind", project="acme")
    handoff = api.handoff_begin(summary="Half-way through the widget migration", project="acme")
    message = api.message_send(to_project="web", body="widget ports moved", from_project="acme")
    assert time.monotonic() - t0 < 30
    assert all(w["pending"] and w["id"].startswith("local-") for w in queued + corrections)
    assert handoff["state"] == "pending" and message["state"] == "pending"

    # Searchable locally at once, labelled, pending.
    for i in (0, 57, 123, 199):
        found = api.query(f"widget{i} gateway", project="acme")
        assert found["fallback"] == "local" and found["lexical"]
        assert found["hits"][0]["id"] == (corrections[i]["id"] if i < CORRECTIONS else queued[i]["id"])
        assert found["hits"][0]["pending"] is True
    assert api.query("migration", project="acme")["hits"][0]["type"] == "Handoff"
    shown = run_cli(client_dir, "outbox", "--json", **env_for(proxy.url))
    states = [e["state"] for e in json.loads(shown.stdout)["entries"]]
    assert states.count("pending") == WRITES + CORRECTIONS + 4

    # One lost answer: the first send landed but the client never heard back. The resend must not duplicate.
    lost = Outbox(client_dir / "client").get(queued[5]["id"])
    assert lost is not None
    first = daemon.request("POST", "/v1/pages", lost.body)[1]

    proxy.set_mode("pass")
    time.sleep(0.9)  # the breaker's window passes; the flush goes out as a probe
    flushed = run_cli(client_dir, "outbox", "--flush", "--json", timeout=300, **env_for(proxy.url))
    report = json.loads(flushed.stdout)
    assert report["flush"]["stopped"] is None, report["flush"]
    by_local = {e["local_id"]: e for e in report["entries"]}
    assert by_local[queued[5]["id"]]["server_id"] == first["id"], "the retry returned the first write"
    assert by_local[duplicate["id"]]["state"] == "duplicate" and by_local[duplicate["id"]]["server_id"] == twin["id"]
    assert by_local[invalid["id"]]["state"] == "failed" and by_local[invalid["id"]]["reason"].startswith("400")
    assert by_local[handoff["id"]]["state"] == "synced" and by_local[message["id"]]["state"] == "synced"

    # Exactly once on the server: 200 facts, 10 of them superseded by 10 corrections.
    meta = daemon.request("GET", "/v1/meta?project=acme")[1]
    assert meta["counts"]["project"]["fact"] == WRITES and meta["superseded"] == CORRECTIONS
    assert meta["counts"]["project"]["rule"] == 1
    for i in range(CORRECTIONS):  # each correction was remapped from the local id to the server's
        original, fixed = by_local[queued[i]["id"]], by_local[corrections[i]["id"]]
        assert fixed["state"] == "synced" and fixed["body"]["supersedes"] == original["server_id"]
        page = daemon.request("GET", f"/v1/pages?id={original['server_id']}")[1]
        assert page["frontmatter"]["superseded_by"] == fixed["server_id"]
    assert len(daemon.request("GET", "/v1/handoffs?project=acme&state=open")[1]["handoffs"]) == 1
    assert len(daemon.request("GET", "/v1/messages?project=web")[1]["messages"]) == 1

    # The local record adopted the server's id: reading the local id now reads the server's page.
    adopted = api.read_page(queued[42]["id"])
    assert adopted["uid"] == by_local[queued[42]["id"]]["server_id"] and "fallback" not in adopted
    again = json.loads(run_cli(client_dir, "outbox", "--flush", "--json", **env_for(proxy.url)).stdout)
    assert again["flush"]["sent"] == []


def test_a_correction_of_a_synced_record_goes_straight_to_the_server(client_dir: Path, proxy: FaultProxy) -> None:
    api = api_for(client_dir, proxy.url)
    proxy.set_mode("refuse")
    original = api.write(text="The cache TTL is 60 seconds.", kind="fact", project="acme")
    proxy.set_mode("pass")
    time.sleep(0.9)
    assert api.status()["version"]  # a successful call flushes the outbox behind it
    entry = Outbox(client_dir / "client").get(original["id"])
    assert entry is not None and entry.state == "synced"
    fixed = api.write(text="The cache TTL is 120 seconds.", kind="fact", project="acme", supersedes=original["id"])
    assert not fixed.get("pending") and fixed["supersedes"] == entry.server_id


def test_cli_write_and_correct_offline_are_labelled_pending(client_dir: Path, proxy: FaultProxy) -> None:
    proxy.set_mode("refuse")
    env = env_for(proxy.url)
    wrote = run_cli(client_dir, "write", "--kind", "decision", "--project", "acme", "Use UTC in every log line.", **env)
    assert wrote.returncode == 0 and wrote.stdout.startswith("pending local-"), wrote.stdout + wrote.stderr
    local_id = wrote.stdout.split()[1].rstrip(":")
    fixed = run_cli(client_dir, "correct", local_id, "Use UTC with offsets in every log line.", **env)
    assert fixed.returncode == 0 and fixed.stdout.startswith("pending local-"), fixed.stdout + fixed.stderr
    sent = run_cli(client_dir, "message", "send", "web", "logs are UTC now", **env)
    assert sent.returncode == 0 and "is pending" in sent.stdout
    begun = run_cli(client_dir, "handoff", "begin", "log format half done", "--project", "acme", **env)
    assert begun.returncode == 0 and "is pending" in begun.stdout
    listing = run_cli(client_dir, "outbox", **env)
    assert "4 pending" in listing.stdout
    found = run_cli(client_dir, "search", "UTC log", "--project", "acme", **env)
    assert "fallback: local" in found.stdout and "pending: not on the server yet" in found.stdout
