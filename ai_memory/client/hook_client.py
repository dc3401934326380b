"""The Python hook client: spool the event, print the agent's reply (what the shell client does,
where it cannot run).

Standard library only, and only the light parts of it: this runs on agent hooks, so its import
path must stay far from aiohttp, the model or the store (a test guards this).

A local daemon watches its spool and takes each file as it lands, so nothing is posted. Against
a daemon on another machine the caller passes ``drain``: a detached child runs it (one drain at
a time, with the circuit breaker's rules: see ``client/hook_drain.py``).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlsplit

BRIEFING_BUDGET_S = 1.0
# As the shell client names them: each agent's session start and prompt events (not Cline's
# TaskStart: Cline drops its output, and a handoff the briefing claimed would be lost).
SESSION_START = {"SessionStart", "session-start", "sessionStart"}
PROMPT_EVENTS = {"UserPromptSubmit", "BeforeAgent", "beforeSubmitPrompt", "userPromptSubmitted"}  # prompt recall answers these
RECALL_BUDGET_S = 0.5
# The daemon is told a little less than we wait: it answers, or records nothing as handed over,
# before we give up on it.
RECALL_DAEMON_BUDGET_MS = 450


def spool_event(spool_dir: Path, envelope: dict[str, object]) -> Path:
    """Write the envelope atomically (temp + rename, mode 0600); the daemon drains what stays."""
    spool_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = f"{int(time.time() * 1000):013d}-{os.getpid()}"
    tmp = spool_dir / f".tmp-{stamp}.part"
    final = spool_dir / f"{stamp}.json"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(json.dumps(envelope).encode())
    os.replace(tmp, final)
    return final


def post(url: str, path: str, token: str, body: bytes, budget_s: float) -> tuple[int, bytes]:
    """One HTTP/1.1 POST over a raw socket, all of it within ``budget_s``; (0, b"") on failure."""
    parts = urlsplit(url)
    deadline = time.monotonic() + budget_s
    head = (
        f"POST {parts.path.rstrip('/')}{path} HTTP/1.1\r\nHost: {parts.hostname}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=budget_s) as sock:
            sock.sendall(head + body)
            chunks = []
            while True:
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
    except OSError:
        return 0, b""
    raw = b"".join(chunks)
    header, _, payload = raw.partition(b"\r\n\r\n")
    try:
        status = int(header.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0, b""
    return status, payload


def detached(work: Callable[[], object]) -> None:
    """Run ``work`` in a forked child of its own session, with no stdio, and return at once.
    Without fork nothing runs: the spool keeps the event for the next delivery."""
    try:
        pid = os.fork()
    except OSError:
        return
    if pid:
        return
    try:
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        work()
    finally:
        os._exit(0)


def run_hook(*, agent: str, event: str | None, stdin: bytes, url: str, token: str,
             spool_dir: Path, out=sys.stdout, drain: Callable[[], object] | None = None,
             briefing: bool = True, recall: bool = True) -> int:
    """Everything ``ai-memory hook`` does; always returns 0.

    ``drain``: deliver through it (a remote daemon) instead of posting directly; ``briefing``:
    False when the circuit breaker is open, so neither SessionStart nor a prompt touches the
    network; ``recall``: False when prompt recall is off (``recall.on_prompt``).
    """
    try:
        payload = json.loads(stdin) if stdin.strip() else {}
    except ValueError:
        payload = {"unparsed_input": stdin.decode("utf-8", "replace")}
    if not isinstance(payload, dict):
        payload = {"value": payload}
    name = event or str(payload.get("hook_event_name") or "")
    host = socket.gethostname()
    envelope: dict[str, object] = {
        "agent": agent, "event": name or None, "host": host, "os": sys.platform,
        "idempotency_key": f"{host}-{os.getpid()}-{time.time_ns()}",
        "captured_at": time.time_ns() // 1_000_000, "payload": payload,  # epoch ms: its real time if delivered late
    }
    try:
        spool_file = spool_event(spool_dir, envelope)
    except OSError:
        spool_file = None
    answered = False
    # A stopped daemon cannot answer: no wait for it (looked at only for the events that ask).
    asks = briefing and name in SESSION_START | PROMPT_EVENTS and not daemon_stopped(spool_dir.parent)
    if name in SESSION_START and asks:  # not while the breaker is open: nothing, as when the daemon is down
        answered = _print_answer(url, f"/v1/briefing?agent={quote(agent)}&format=hook", token, payload, out,
                                 BRIEFING_BUDGET_S)
    elif name in PROMPT_EVENTS and asks and recall:
        answered = _print_answer(url, f"/v1/recall?agent={quote(agent)}&event={quote(name)}&format=hook"
                                 f"&budget_ms={RECALL_DAEMON_BUDGET_MS}", token,
                                 payload, out, RECALL_BUDGET_S)
    if not answered and name not in SESSION_START:
        out.write("{}\n")
    out.flush()
    if spool_file is not None and drain is not None:
        detached(drain)
    return 0


def daemon_stopped(data_dir: Path) -> bool:
    """Whether the live daemon of ``data_dir`` (its ``daemon.json``) is stopped by a signal
    (state T in /proc): it accepts connections and answers none. False where /proc cannot tell."""
    try:
        pid = json.loads((data_dir / "daemon.json").read_text(encoding="utf-8")).get("pid")
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    fields = stat[stat.rfind(")") + 2:].split()
    return bool(fields) and fields[0] in ("T", "t")


def _print_answer(url: str, path: str, token: str, payload: dict[str, object], out, budget_s: float) -> bool:
    """The daemon's answer to a hook that prints one (the briefing, prompt recall), within
    ``budget_s``; the project named here, where the daemon cannot read our paths."""
    from ai_memory.client.hook_drain import with_project  # never on a capture event's path

    named = with_project({"payload": payload})["payload"].get("project")  # type: ignore[index]
    project = f"&project={quote(str(named))}" if named else ""
    status, body = post(url, path + project, token, json.dumps(payload).encode(), budget_s)
    if status == 200 and body.strip().startswith(b"{"):
        out.write(body.decode("utf-8", "replace").strip() + "\n")
        return True
    return False