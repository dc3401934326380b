"""The docs keep up with the code: every CLI verb, config key and MCP tool is in the README."""

from __future__ import annotations

import argparse
import re

import pytest

from ai_memory.cli.main import build_parser
from ai_memory.config import KEYS
from ai_memory.core.own_tools import TOOL_NAMES
from conftest import REPO

README = (REPO / "README.md").read_text()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_commands() -> list[str]:
    """Every verb, and every subcommand as "verb sub"."""
    found = []
    for verb, parser in _subparsers(build_parser()).items():
        found.append(verb)
        found += [f"{verb} {sub}" for sub in _subparsers(parser)]
    return found


@pytest.mark.parametrize("command", cli_commands())
def test_every_cli_verb_is_documented(command: str) -> None:
    verb, _, sub = command.partition(" ")
    assert f"ai-memory {verb}" in README, f"README does not show `ai-memory {verb}`"
    if sub:
        lines = [line for line in README.splitlines() if f"ai-memory {verb}" in line]
        assert any(sub in line for line in lines), f"README does not show `ai-memory {verb} {sub}`"


@pytest.mark.parametrize("key", [k.dotted for k in KEYS])
def test_every_config_key_is_documented(key: str) -> None:
    assert f"`{key}`" in README, f"config key {key} is missing from README's configuration table"


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_every_mcp_tool_is_documented(tool: str) -> None:
    assert f"`{tool}`" in README, f"MCP tool {tool} is missing from README"


def test_the_lists_are_not_empty() -> None:
    """A docs test over nothing would pass forever."""
    assert len(cli_commands()) > 20 and len(KEYS) > 15 and len(TOOL_NAMES) == 20


def _declared() -> list[str]:
    import re
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return [re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in deps]


def test_every_declared_dependency_is_used_and_in_the_architecture_table() -> None:
    """A package is declared because the code imports it, and ARCHITECTURE.md says why."""
    import ast
    from importlib.metadata import packages_distributions

    imported = set()
    for path in (REPO / "ai_memory").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    modules_of: dict[str, set[str]] = {}
    for module, dists in packages_distributions().items():
        for dist in dists:
            modules_of.setdefault(dist.lower().replace("_", "-"), set()).add(module)
    table = (REPO / "ARCHITECTURE.md").read_text().split("## Dependencies, and why", 1)[1]
    for dist in _declared():
        assert modules_of.get(dist, set()) & imported or dist == "torch", f"{dist} is declared but never imported"
        assert dist in table.lower(), f"{dist} is missing from ARCHITECTURE.md's dependency table"


def test_every_reranker_feature_is_documented_with_its_weight() -> None:
    """The README's table of features is the registry's: a new feature or weight changes both."""
    from ai_memory.retrieval.features import FEATURES

    for feature in FEATURES:
        assert f"| `{feature.name}` | {feature.weight} |" in README, feature.name
    table = README.split("| feature | weight | what it measures |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert rows == [f.name for f in FEATURES], "the README's table lists a feature the registry lacks, or out of order"
