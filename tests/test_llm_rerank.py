"""The optional LLM rerank against the stub: the model's order, and the local one on failure."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from conftest import Daemon
from llm_helpers import llm_config, start_daemon
from llm_stub import HANG, StubServer

TEXTS = ["Deploys go out from the release branch on Tuesdays.",
         "The release branch is cut from main every Monday.",
         "Hotfixes skip the release train and deploy directly.",
         "Release notes are written by whoever cuts the release branch."]


def _reversed(prompt: str) -> dict:
    count = len(re.findall(r"^\[(\d+)\] ", prompt, re.M))
    return {"order": list(range(count, 0, -1))}


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    server = StubServer()
    server.model.default_rerank = _reversed
    yield server
    server.close()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory, stub: StubServer) -> Iterator[Daemon]:
    data_dir = tmp_path_factory.mktemp("llm-rerank") / "data"
    d = start_daemon(data_dir, llm_config(stub, rerank=True, rerank_timeout_s=0.5))
    for text in TEXTS:
        status, body, _ = d.request("POST", "/v1/pages", {"text": text, "kind": "fact", "project": "acme-api"})
        assert status in (200, 201), body
    yield d
    d.stop()


def _query(daemon: Daemon, k: int = 10) -> list[dict]:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": "release branch", "project": "acme-api",
                                                           "explain": True, "k": k})
    assert status == 200, body
    return body["hits"]


def test_the_model_orders_the_local_top_and_explain_says_so(daemon: Daemon, stub: StubServer) -> None:
    hits = _query(daemon)
    assert len(hits) >= 3
    orderings = [h["explain"]["ordering"] for h in hits]
    assert all(o["used"] == "llm" for o in orderings)
    assert [o["local_rank"] for o in orderings] == list(range(len(hits), 0, -1))
    call = stub.model.calls("rerank")[-1]
    assert "release branch" in call.body["messages"][1]["content"] and "<ai-memory-data>" in call.body["messages"][1]["content"]


def test_k_cuts_after_the_model_ordered_the_wider_top(daemon: Daemon) -> None:
    everything = _query(daemon)
    two = _query(daemon, k=2)
    assert [h["path"] for h in two] == [h["path"] for h in everything[:2]]


@pytest.mark.parametrize("reply", [HANG, "no idea", {"order": [99]}, 500], ids=["timeout", "not-json", "bad-number", "5xx"])
def test_on_any_failure_the_local_order_stands(daemon: Daemon, stub: StubServer, reply: object) -> None:
    stub.model.released.clear()
    stub.model.rerank.append(reply)
    hits = _query(daemon)
    stub.model.release()
    orderings = [h["explain"]["ordering"] for h in hits]
    assert all(o["used"] == "local" and o["reason"] for o in orderings)
    assert [o["local_rank"] for o in orderings] == list(range(1, len(hits) + 1))
