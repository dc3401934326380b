"""A local TCP proxy in front of a real daemon that injects network faults on demand.

Modes:
- ``pass``: forward bytes both ways;
- ``refuse``: nothing listens on the port (connect is refused);
- ``blackhole``: a listener whose accept queue is full and never drained, so the kernel drops
  new SYNs and a connect times out (what a dead VPN route looks like);
- ``delay``: forward, but hold each connection ``delay_s`` before the first byte goes upstream;
- ``5xx``: answer every request ``503`` with ``Retry-After: 0``;
- ``slow_body``: answer ``200`` with a Content-Length of 4096, send 10 bytes, then stall.

``connections`` counts TCP connections accepted while not in ``refuse``/``blackhole``: with the
breaker open it must not move.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Daemon


class FaultProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream = ("127.0.0.1", upstream_port)
        self.mode = "pass"
        self.delay_s = 0.0
        self.connections = 0
        self._listener: socket.socket | None = None
        self._fillers: list[socket.socket] = []
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = int(probe.getsockname()[1])
        probe.close()
        self.set_mode("pass")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def set_mode(self, mode: str, delay_s: float = 0.0) -> None:
        """Switch fault; listener changes (refuse, blackhole) happen before this returns."""
        self._close_listener()
        self.mode, self.delay_s = mode, delay_s
        if mode == "refuse":
            return
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        if mode == "blackhole":
            sock.listen(0)
            self._listener = sock
            self._fill_backlog()
            return
        sock.listen(128)
        self._listener = sock
        threading.Thread(target=self._accept, args=(sock,), daemon=True).start()

    def close(self) -> None:
        self._close_listener()
        for held in self._held:
            held.close()

    def _fill_backlog(self) -> None:
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            try:
                filler.connect(("127.0.0.1", self.port))
            except BlockingIOError:
                pass
            self._fillers.append(filler)
        time.sleep(0.05)

    def _close_listener(self) -> None:
        for sock in [self._listener, *self._fillers]:
            if sock is not None:
                try:  # wakes the thread blocked in accept(); close() alone would leave it listening
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()
        self._listener, self._fillers = None, []

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener was closed: a mode change
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._handle, args=(conn, self.mode), daemon=True).start()

    def _handle(self, conn: socket.socket, mode: str) -> None:
        try:
            if mode == "5xx":
                _read_request(conn)
                body = b'{"error": "injected failure"}'
                conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 0\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                conn.close()
            elif mode == "slow_body":
                _read_request(conn)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
                             b'{"hits": [')
                self._held.append(conn)  # never finish, never close: the client must give up on its own
            else:
                if mode == "delay":
                    time.sleep(self.delay_s)
                self._forward(conn)
        except OSError:
            conn.close()

    def _forward(self, conn: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream, timeout=30)
        threading.Thread(target=_pipe, args=(upstream, conn), daemon=True).start()
        _pipe(conn, upstream)


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _read_request(conn: socket.socket) -> None:
    """Read headers and the announced body, so the client is not reset while still sending."""
    conn.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        rest += chunk


@pytest.fixture
def proxy(daemon: Daemon) -> Iterator[FaultProxy]:
    p = FaultProxy(daemon.port)
    yield p
    p.close()


@pytest.fixture
def client_dir(tmp_path: Path, daemon: Daemon) -> Path:
    """The other machine's data dir: the daemon's token, nothing else."""
    d = tmp_path / "laptop"
    d.mkdir()
    shutil.copy(daemon.data_dir / "token", d / "token")
    return d
