"""A stub LLM provider for the tests: a real HTTP server speaking both wire formats.

``/v1/chat/completions`` answers as an OpenAI-compatible server does, ``/v1/messages`` as the
Anthropic Messages API does, and ``/v1/models`` serves the start-up check. What the model
"says" is scripted per kind of request (consolidation or rerank): a queue of replies, each a
text, ``HANG`` (hold the request until ``release()`` or the client gives up), or an HTTP
status. Every request is recorded with its path, headers and body.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

HANG = object()


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class StubModel:
    """What the stub answers; ``default_*`` once the scripted replies are used up."""

    consolidation: deque = field(default_factory=deque)
    rerank: deque = field(default_factory=deque)
    default_consolidation: Callable[[str], Any] = lambda prompt: {"summary": "Nothing to say.", "memories": []}
    default_rerank: Callable[[str], Any] = lambda prompt: {"order": []}
    models_status: int = 200
    seen: list[Seen] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply_for(self, system: str, prompt: str) -> Any:
        rerank = system.startswith("You order search results")
        with self.lock:
            queue = self.rerank if rerank else self.consolidation
            if queue:
                return queue.popleft()
        return (self.default_rerank if rerank else self.default_consolidation)(prompt)

    def calls(self, kind: str) -> list[Seen]:
        """Requests of one kind: "consolidation", "rerank" or "models"."""
        with self.lock:
            seen = list(self.seen)
        if kind == "models":
            return [s for s in seen if s.path.endswith("/models")]
        want_rerank = kind == "rerank"
        return [s for s in seen if not s.path.endswith("/models")
                and _system_of(s.body).startswith("You order search results") == want_rerank]

    def release(self) -> None:
        self.released.set()


def _system_of(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    if isinstance(body.get("system"), str):
        return body["system"]
    for message in body.get("messages", []):
        if message.get("role") == "system":
            return str(message.get("content"))
    return ""


def _prompt_of(body: dict[str, Any]) -> str:
    return next((str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user"), "")


class _Handler(BaseHTTPRequestHandler):
    model: StubModel

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.model.seen.append(Seen(self.path, dict(self.headers), None))
        if self.path not in ("/v1/models",):
            return self._send(404, {"error": {"message": f"no route {self.path}"}})
        status = self.model.models_status
        self._send(status, {"data": [{"id": "stub-model"}]} if status == 200 else {"error": {"message": "bad key"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        with self.model.lock:
            self.model.seen.append(Seen(self.path, dict(self.headers), body))
        reply = self.model.reply_for(_system_of(body), _prompt_of(body))
        if reply is HANG:
            self.model.released.wait(30)
            return self._send(200, _wrap(self.path, "{}"))
        if isinstance(reply, int):
            return self._send(reply, {"error": {"message": f"stub status {reply}"}})
        text = reply if isinstance(reply, str) else json.dumps(reply)
        self._send(200, _wrap(self.path, text))


def _wrap(path: str, text: str) -> dict[str, Any]:
    """The model's text in the format of the endpoint that was called."""
    if path == "/v1/messages":
        return {"id": "msg_stub", "type": "message", "role": "assistant", "model": "stub-model",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}
    return {"id": "chatcmpl-stub", "object": "chat.completion", "model": "stub-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up on a held request (a timeout under test) is expected."""


class StubServer:
    """The stub on 127.0.0.1 and a free port, served from a thread until ``close``."""

    def __init__(self, model: StubModel | None = None) -> None:
        self.model = model or StubModel()
        handler = type("Handler", (_Handler,), {"model": self.model})
        self._server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self.model.release()
        self._server.shutdown()
        self._server.server_close()
