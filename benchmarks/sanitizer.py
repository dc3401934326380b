"""Sanitizer speed: microseconds per 2 KB hook event, clean and with secrets.

    python benchmarks/sanitizer.py [--repeat N]

Clean events are 2 KB of real text of four shapes: standard-library source (what Read and Edit
return), shell output, a prose prompt, and a PostToolUse payload through sanitize_json. Events
with secrets are the same text with one to three real-format secrets from the test corpus spliced
in. The last line times three case-insensitive patterns without a literal prefix on the same
text, the yardstick the design brief quoted (~97 µs on its machine), so figures from different
machines can be compared.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from ai_memory.core.sanitizer import TextKind, sanitize, sanitize_json  # noqa: E402
from sanitizer_corpus import secret_samples, stdlib_files  # noqa: E402

SIZE = 2048
SHELL = """$ git status
On branch feature/login-retry
Your branch is ahead of 'origin/feature/login-retry' by 2 commits.
Changes not staged for commit:
  modified:   src/auth/session.py
  modified:   tests/test_session.py
$ pytest -q tests/test_session.py
........................................F.....                          [100%]
FAILED tests/test_session.py::test_refresh_expired - AssertionError: 401 != 200
1 failed, 45 passed in 2.31s
$ ls -la build/
drwxr-xr-x  5 dev staff   160 Nov 30 09:12 .
-rw-r--r--  1 dev staff 48213 Nov 30 09:12 app-1.4.2-py3-none-any.whl
$ pip install -e '.[test]'
Collecting httpx>=0.27 (from acme-api==1.4.2)
  Using cached httpx-0.27.2-py3-none-any.whl (76 kB)
Successfully installed acme-api-1.4.2 httpx-0.27.2
"""
PROSE = """The login flow retries forever when the refresh endpoint returns 401. Can you make the client
give up after three attempts, log a warning with the user id, and surface a clear error to the
caller? Keep the backoff we already have, and add a test that fakes the clock instead of sleeping.
Also check whether the session cookie is cleared on logout, because support says users stay signed
in on shared machines. Please do not change the public API of the Session class.
"""


def _fill(text: str) -> str:
    return (text * (SIZE // len(text) + 1))[:SIZE]


def clean_events(rng: random.Random) -> dict[str, list[str]]:
    files = stdlib_files()
    code = []
    for path in rng.sample(files, 200):
        source = path.read_text(encoding="utf-8", errors="replace")
        if len(source) > SIZE:
            start = rng.randrange(len(source) - SIZE)
            code.append(source[start:start + SIZE])
    return {"code": code, "shell": [_fill(SHELL[i:] + SHELL[:i]) for i in range(0, 400, 10)],
            "prose": [_fill(PROSE[i:] + PROSE[:i]) for i in range(0, 400, 10)]}


def with_secrets(events: list[str], rng: random.Random) -> list[str]:
    samples = secret_samples()
    out = []
    for text in events:
        for _ in range(rng.randint(1, 3)):
            at = text.rfind("\n", 0, rng.randrange(len(text))) + 1
            text = text[:at] + rng.choice(samples).text + "\n" + text[at:]
        out.append(text[:SIZE + 600])
    return out


def per_event_us(fn: Callable[[object], object], events: list, repeat: int) -> float:
    """Median over `repeat` runs of the mean time per event, in microseconds."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for event in events:
            fn(event)
        runs.append((time.perf_counter() - start) / len(events) * 1e6)
    return statistics.median(runs)


def payloads(texts: list[str]) -> list[dict]:
    return [{"session_id": "bench", "hook_event_name": "PostToolUse", "cwd": "/home/dev/acme-api",
             "tool_name": "Read", "tool_input": {"file_path": "/home/dev/acme-api/src/auth/session.py"},
             "tool_response": {"file": {"content": text, "numLines": text.count("\n")}}} for text in texts]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(2025)
    clean = clean_events(rng)
    rows = []
    for shape, events in clean.items():
        dirty = with_secrets(events, rng)
        rows.append((f"{shape} (2 KB)", per_event_us(lambda t: sanitize(t, TextKind.TOOL_IO), events, args.repeat),
                     per_event_us(lambda t: sanitize(t, TextKind.TOOL_IO), dirty, args.repeat)))
    json_clean, json_dirty = payloads(clean["code"]), payloads(with_secrets(clean["code"], rng))
    rows.append(("hook payload, sanitize_json", per_event_us(sanitize_json, json_clean, args.repeat),
                 per_event_us(sanitize_json, json_dirty, args.repeat)))
    print(f"{'event':32} {'clean µs':>9} {'with secrets µs':>16}")
    for name, clean_us, dirty_us in rows:
        print(f"{name:32} {clean_us:9.1f} {dirty_us:16.1f}")
    yardstick = [re.compile(r"(?i)(?:password|passwd|pwd|secret|token|api_?key)\s*[:=]\s*\S+"),
                 re.compile(r"(?i)\b(?:bearer|basic)\s+[a-z0-9._~+/=-]+"),
                 re.compile(r"(?i)[a-z][a-z0-9+.-]*://[^\s:@/]+:[^\s@/]+@")]
    us = per_event_us(lambda t: [p.findall(t) for p in yardstick], clean["code"], args.repeat)
    print(f"{'yardstick: 3 unanchored (?i) res':32} {us:9.1f}   (the brief measured ~97 µs on its machine)")
    print(json.dumps({name: {"clean_us": round(c, 1), "secrets_us": round(d, 1)} for name, c, d in rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
