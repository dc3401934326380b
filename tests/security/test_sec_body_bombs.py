"""Issue 39, item 2: a body is bounded by what its route can use. Past its bytes, or holding more
JSON values than its route can use (9.9 MB of ``[],`` grew the daemon by 570 MB), it is refused
with 413 before it is parsed, and eight of them at once neither grow the daemon nor stall /health."""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

import proc_memory
from conftest import Daemon
from test_team import add_user
from ui_helpers import Browser

MB = 1 << 20


def _bomb(size: int, filler: bytes = b"[],") -> bytes:
    head, tail = b'{"session_id": "bomb", "hook_event_name": "Stop", "x": [', b"[]]}"
    return head + filler * ((size - len(head) - len(tail)) // len(filler)) + tail


def _post(daemon: Daemon, token: str, path: str, body: bytes | Iterator[bytes],
          ctype: str = "application/json") -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=120)
    try:
        conn.request("POST", path, body=body, encode_chunked=not isinstance(body, bytes),
                     headers={"Authorization": f"Bearer {token}", "Content-Type": ctype})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, str]]:
    daemon = Daemon(tmp_path_factory.mktemp("bombs") / "data").start()
    yield daemon, add_user(daemon.data_dir, "mallory", daemon)
    daemon.stop()


def test_a_body_past_its_routes_bytes_is_413(served: tuple[Daemon, str]) -> None:
    daemon, token = served
    for path, body in (("/hook?agent=claude", _bomb(9_900_000)),
                       ("/hook/batch", b"[" + _bomb(9_900_000) + b"]"),
                       ("/hook/envelope", json.dumps({"agent": "claude", "payload": {"t": "x" * (MB + 10)}}).encode()),
                       ("/v1/query", json.dumps({"q": "x", "pad": "y" * (65 << 10)}).encode()),
                       ("/v1/pages", json.dumps({"text": "z" * (300 << 10), "kind": "fact", "project": "p"}).encode())):
        status, reply = _post(daemon, token, path, body)
        assert status == 413 and reply["error"] == "body too large", (path, status, reply)


def test_a_json_bomb_within_the_bytes_is_413_before_it_is_parsed(served: tuple[Daemon, str]) -> None:
    daemon, token = served
    for path, body in (("/hook?agent=claude", _bomb(MB - 1024)),
                       ("/hook?agent=claude", _bomb(MB - 1024, b'"a",')),
                       ("/hook/batch", b"[" + _bomb(2 * MB - 1024, b"{},") + b"]"),
                       ("/v1/handoffs", json.dumps({"summary": "s", "next_steps": [[]] * 20000}).encode())):
        status, reply = _post(daemon, token, path, body)
        assert status == 413 and reply["error"] == "too many JSON values", (path, status, reply)
    chunks = iter([_bomb(MB - 1024)[i:i + 65536] for i in range(0, MB - 1024, 65536)])
    status, reply = _post(daemon, token, "/hook?agent=claude", chunks)  # no declared length: counted all the same
    assert status == 413 and reply["error"] == "too many JSON values", reply


def test_what_a_route_can_use_still_goes_through(served: tuple[Daemon, str]) -> None:
    daemon, token = served
    whole_output = {"session_id": "big", "hook_event_name": "PostToolUse", "tool_name": "Read",
                    "tool_response": "line of a large file, [with] {brackets}\n" * 20000}
    status, reply = _post(daemon, token, "/hook?agent=claude", json.dumps(whole_output).encode())
    assert status == 202, reply
    many = {"session_id": "big", "hook_event_name": "PostToolUse", "tool_name": "Glob",
            "tool_response": {"filenames": [f"src/f{i}.py" for i in range(10000)]}}
    assert _post(daemon, token, "/hook?agent=claude", json.dumps(many).encode())[0] == 202
    batch = json.dumps([{"session_id": "b", "hook_event_name": "Stop", "n": i} for i in range(256)]).encode()
    status, reply = _post(daemon, token, "/hook/batch", iter([batch[:1000], batch[1000:]]))
    assert status == 200 and reply["accepted"] == 256, reply


def test_eight_bombs_at_once_neither_grow_the_daemon_nor_stall_it(served: tuple[Daemon, str]) -> None:
    daemon, token = served
    assert daemon.proc is not None
    bodies = [("/hook?agent=claude", _bomb(9_900_000)), ("/hook?agent=claude", _bomb(9_900_000, b"{},")),
              ("/hook/batch", b"[" + _bomb(9_900_000) + b"]"), ("/hook?agent=claude", _bomb(MB - 1024))]
    before, peak, health_ms, stop = proc_memory.of(daemon.proc.pid), [0], [], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], proc_memory.of(daemon.proc.pid))
            t0 = time.perf_counter()
            assert daemon.request("GET", "/health", auth=False)[0] == 200
            health_ms.append((time.perf_counter() - t0) * 1000)
            stop.wait(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda i: _post(daemon, token, *bodies[i % 4]), range(16)))
    finally:
        stop.set()
        watcher.join()
    assert all(status == 413 for status, _ in answers), answers
    assert (peak[0] - before) / MB < 50, f"the daemon grew by {(peak[0] - before) / MB:.0f} MB"
    health_ms.sort()
    assert health_ms and health_ms[len(health_ms) // 2] < 250, health_ms  # the median: a shared machine is noisy


def test_a_web_form_past_its_bytes_is_413(served: tuple[Daemon, str]) -> None:
    daemon, token = served
    browser = Browser(daemon).login(token)
    status, text, _ = browser.request("POST", "/ui/feedback", {"csrf": browser.csrf(), "path": "p.md",
                                                               "signal": "helpful", "pad": "&" * (20 << 10)})
    assert status == 413 and "form too large" in text


def test_an_mcp_body_past_its_bytes_is_413(served: tuple[Daemon, str]) -> None:
    daemon, token = served
    status, reply = _post(daemon, token, "/mcp", b'{"jsonrpc": "2.0", "pad": "' + b"x" * (300 << 10) + b'"}')
    assert status == 413, reply
