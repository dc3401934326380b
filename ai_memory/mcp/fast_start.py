"""The MCP server's front door: the handshake answered before the SDK is even imported.

Hosts do not wait long for a server: Codex and Claude Code send their first model request as
soon as their servers are up or late, and a server that has not listed its tools by then is
missing from it. The official SDK takes seconds of CPU to import, so ``serve_fast`` answers
``initialize`` and the lists that follow it (tools, prompts, resources: Claude Code takes a
server's tools only once all three are listed) from ``catalog.json`` (what the SDK itself answers, checked
by a test and rewritten by ``python -m ai_memory.mcp.catalog``) while the SDK loads.

The SDK is loaded only when the session needs it: at the first request the front cannot
answer (a tool call, say). A session that never uses a memory tool never pays for it, which
matters beside an agent that runs on the same two cores. The SDK server then runs in this
process on a pipe pair; it is handed the handshake the front answered (whose second answer is
dropped, so the host gets exactly one answer per request) and every later line. The real
stdout is taken over at once (fd 1 then points at stderr), so a stray print anywhere can never
corrupt the protocol stream.

A host stops its server with a signal and gives it little time: Claude Code sends SIGINT,
SIGTERM 100 ms later, and its own exit waits for the server's. The server holds nothing that
needs saving (every write is the daemon's, over HTTP), so a stop signal ends it at once.

Standard library only at import; the SDK is imported by the caller's ``load``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

CATALOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalog.json")
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")


def load_catalog(path: str = CATALOG) -> dict[str, Any] | None:
    """``{"handshake_versions": [...], "initialize": {...}, "lists": {method: result}}``; None if unreadable."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and {"handshake_versions", "initialize", "lists"} <= set(doc) else None


def _key(message_id: Any) -> str:
    return json.dumps(message_id, sort_keys=True)


class Front:
    """Pumps host → SDK and SDK → host, answering the handshake from the catalog on the way."""

    def __init__(self, catalog: dict[str, Any] | None, host_in: BinaryIO, host_out: BinaryIO,
                 to_sdk: BinaryIO, from_sdk: BinaryIO) -> None:
        self.catalog = catalog  # None: no early answers, every request waits for the SDK
        self.host_in, self.host_out, self.to_sdk, self.from_sdk = host_in, host_out, to_sdk, from_sdk
        self._answered: set[str] = set()  # ids the front answered: the SDK's answers to them are dropped
        self._lock = threading.Lock()  # one writer of host_out at a time
        self._initialized = False
        self.needed = threading.Event()  # set at the first line only the SDK can answer, or at EOF
        self.sdk_wanted = catalog is None
        if catalog is None:
            self.needed.set()
        self._threads = [threading.Thread(target=self._inbound, name="mcp-in", daemon=True),
                         threading.Thread(target=self._outbound, name="mcp-out", daemon=True)]

    def start(self) -> "Front":
        for thread in self._threads:
            thread.start()
        return self

    def join(self, timeout: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout)

    def _send_host(self, data: bytes) -> None:
        with self._lock:
            try:
                self.host_out.write(data)
                self.host_out.flush()
            except (OSError, ValueError):  # the host went away
                pass

    def _early_answer(self, message: Any) -> dict[str, Any] | None:
        """The catalog's answer to a handshake request, or None to leave it to the SDK."""
        if self.catalog is None or not isinstance(message, dict) or "id" not in message:
            return None
        method = message.get("method")
        if method == "initialize" and not self._initialized:
            self._initialized = True
            params = found if isinstance(found := message.get("params"), dict) else {}
            requested = params.get("protocolVersion")
            versions = self.catalog["handshake_versions"]
            version = requested if requested in versions else versions[-1]
            return {**self.catalog["initialize"], "protocolVersion": version}
        params = found if isinstance(found := message.get("params"), dict) else {}
        if method in self.catalog["lists"] and self._initialized and not params.get("cursor"):
            return self.catalog["lists"][method]
        if method == "ping":
            return {}
        return None

    def _to_sdk(self, line: bytes) -> bool:
        try:
            self.to_sdk.write(line if line.endswith(b"\n") else line + b"\n")
            self.to_sdk.flush()
        except (OSError, ValueError):
            return False
        return True

    def _inbound(self) -> None:
        try:
            for line in self.host_in:
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                result = self._early_answer(message)
                if result is not None:
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                    self._send_host(json.dumps(reply, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
                    if message.get("method") != "initialize":
                        continue  # answered for good; the SDK never needs to see it
                    self._answered.add(_key(message["id"]))  # the SDK must see it: drop its answer
                elif isinstance(message, dict) and "id" in message and "method" in message:
                    self.sdk_wanted = True
                    self.needed.set()
                if not self._to_sdk(line):
                    return
        finally:
            try:
                self.to_sdk.close()  # EOF: the SDK server ends its session
            except OSError:
                pass
            self.needed.set()

    def _outbound(self) -> None:
        for line in self.from_sdk:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if (isinstance(message, dict) and "method" not in message and "id" in message
                    and _key(message["id"]) in self._answered):
                self._answered.discard(_key(message["id"]))
                continue
            self._send_host(line)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop_now(signo: int, _frame: object) -> None:
    sys.stderr.flush()
    os._exit(128 + signo)


def serve_fast(load: Callable[[BinaryIO, BinaryIO], int]) -> int:
    """Serve MCP on this process's stdio; ``load(sdk_in, sdk_out)`` imports the SDK and runs the
    real server on the given pipe ends until its input ends, returning the exit code."""
    if threading.current_thread() is threading.main_thread():  # only there can it take signals
        for signo in STOP_SIGNALS:
            signal.signal(signo, _stop_now)
    catalog = load_catalog()
    host_in = os.fdopen(os.dup(0), "rb", buffering=0)
    host_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # nothing else reads the host's input...
    os.close(devnull)
    os.dup2(2, 1)  # ...or writes into its output: a stray print lands on stderr
    sdk_in_r, sdk_in_w = os.pipe()
    sdk_out_r, sdk_out_w = os.pipe()
    to_sdk, from_sdk = os.fdopen(sdk_in_w, "wb"), os.fdopen(sdk_out_r, "rb")
    sdk_in, sdk_out = os.fdopen(sdk_in_r, "rb"), os.fdopen(sdk_out_w, "wb")
    front = Front(catalog, host_in, host_out, to_sdk, from_sdk).start()
    try:
        front.needed.wait()
        code = load(sdk_in, sdk_out) if front.sdk_wanted else 0
    finally:
        sdk_out.close()  # the outbound pump drains what the SDK wrote, then ends
        front.join(timeout=5)
    return code
