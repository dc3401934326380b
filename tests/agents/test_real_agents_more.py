"""The same scenarios as test_real_agents.py for OpenCode, Copilot CLI, Qwen Code and Cline, in a
world of their own: a second module, so the two halves of the real-agent suite run side by side.
"""

from __future__ import annotations

from test_real_agents import *  # noqa: F401,F403  the scenarios, the world fixture and their parametrization

AGENTS = ("opencode", "copilot", "qwen", "cline")
