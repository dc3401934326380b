"""A watcher of every process's command line and environment, looking for a secret (Linux /proc)."""

from __future__ import annotations

import threading
from pathlib import Path


class ProcScanner:
    """Reads every process's command line (and environment) while it runs, looking for a secret."""

    def __init__(self, secret: str) -> None:
        self.secret = secret.encode()
        self.found: list[str] = []
        self.scans = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "ProcScanner":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _check(self, where: str, data: bytes) -> None:
        if self.secret in data:
            self.found.append(f"{where}: {data[:200]!r}")

    def _loop(self) -> None:
        while not self._stop.is_set():
            for proc in Path("/proc").iterdir():
                if not proc.name.isdigit():
                    continue
                for what in ("cmdline", "environ"):
                    try:
                        data = (proc / what).read_bytes()
                    except OSError:
                        continue
                    self._check(f"{proc.name}/{what}", data)
            self.scans += 1
            self._stop.wait(0.002)  # a pass takes a few ms; leave the CPU to what is being watched


class ProcRecorder(ProcScanner):
    """Keeps every command line and environment it reads, for a secret known only afterwards."""

    def __init__(self) -> None:
        super().__init__("")
        self.seen: dict[bytes, str] = {}

    def _check(self, where: str, data: bytes) -> None:
        self.seen.setdefault(data, where)

    def holding(self, secret: str) -> list[str]:
        """Where ``secret`` was seen: ``<pid>/cmdline`` or ``<pid>/environ`` with the text's start."""
        return [f"{where}: {data[:200]!r}" for data, where in self.seen.items() if secret.encode() in data]
