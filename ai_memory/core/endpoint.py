"""The endpoint record: where the daemon serving a data dir listens (``<data_dir>/daemon.json``).

``serve`` writes it once it listens and removes it on a clean exit; every client reads it to
find the daemon of a data dir without being told the port. One line of JSON with the keys in
a fixed order, so the shell hook client can read it with ``sed``:

    {"url": "http://127.0.0.1:49374", "pid": 4242, "started_at": "2026-12-01T10:00:00Z"}

A record whose pid is not alive is stale (the daemon was killed) and is ignored; checking the
pid is the reader's I/O, not this module's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

ENDPOINT_FILE = "daemon.json"
_URL = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+(:\d{1,5})?$")


@dataclass(frozen=True)
class Endpoint:
    url: str
    pid: int
    started_at: str


def render_endpoint(endpoint: Endpoint) -> str:
    return json.dumps({"url": endpoint.url, "pid": endpoint.pid, "started_at": endpoint.started_at}) + "\n"


def parse_endpoint(text: str) -> Endpoint | None:
    """The record in ``text``; None for anything that is not a well-formed one."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    url, pid, started = doc.get("url"), doc.get("pid"), doc.get("started_at", "")
    if not isinstance(url, str) or not _URL.match(url):
        return None
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    return Endpoint(url=url, pid=pid, started_at=str(started))


def daemon_url(host: str, port: int) -> str:
    """The URL a client uses for a daemon bound to ``host``: a wildcard is reached on loopback,
    an IPv6 address is bracketed."""
    reach = "127.0.0.1" if host in ("0.0.0.0", "::", "[::]", "") else host
    if ":" in reach and not reach.startswith("["):
        reach = f"[{reach}]"
    return f"http://{reach}:{port}"
