"""Fail unless the JUnit report shows the real-agent suite ran: tests of tests/agents, all passed."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

AGENTS = ("claude", "codex", "gemini", "opencode", "copilot", "qwen", "cline")
PER_AGENT = 6  # up, own calls, next session, stopped before and during, hung (and prompt recall where it can)
MINIMUM = PER_AGENT * len(AGENTS)


def main(path: str) -> int:
    cases = [c for c in ET.parse(path).getroot().iter("testcase") if "agents" in c.get("classname", "")]
    unpassed = [f"{c.get('name')}: {child.tag}" for c in cases for child in c
                if child.tag in ("skipped", "failure", "error")]
    short = [a for a in AGENTS if sum(f"[{a}" in c.get("name", "") for c in cases) < PER_AGENT]
    if len(cases) < MINIMUM or unpassed or short:
        print(f".ci/run: the real-agent suite must run here (npm is installed): {len(cases)} tests found, "
              f"{'; '.join(unpassed) or 'fewer than ' + str(PER_AGENT) + ' for ' + ', '.join(short or AGENTS)}",
              file=sys.stderr)
        return 1
    print(f".ci/run: real-agent suite ran: {len(cases)} tests passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
