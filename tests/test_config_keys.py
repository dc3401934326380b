"""Every configuration value the code reads is a key of the table: ``config.<section>.<key>``
with a mistyped section or key fails here, before it ships, and in ``Config`` at start-up
(an unknown key or a value of the wrong type), never when the line that reads it first runs."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from ai_memory.client.breaker import BreakerPolicy
from ai_memory.client.resilient import ClientSettings
from ai_memory.core.settings import ClientSection
from ai_memory.config import KEYS, SECTIONS, Config, load_config
from ai_memory.core.errors import ConfigError

PACKAGE = Path(__file__).resolve().parent.parent / "ai_memory"
CONFIG_ATTRS = {f.name for f in dataclasses.fields(Config)} | {n for n in vars(Config) if not n.startswith("_")}
FIELDS = {name: {f.name for f in dataclasses.fields(cls)} for name, cls in SECTIONS.items()}


def _is_config(node: ast.expr) -> bool:
    """``config``, ``cfg`` or ``<anything>.config``: what the code calls a Config."""
    return (isinstance(node, ast.Name) and node.id in ("config", "cfg")) or \
        (isinstance(node, ast.Attribute) and node.attr == "config")


def _section_aliases(function: ast.AST) -> dict[str, str]:
    """Names a function binds to a section (``llm = config.llm``), with the section they hold."""
    return {target.id: node.value.attr for node in ast.walk(function) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Attribute) and _is_config(node.value.value) and node.value.attr in FIELDS
            for target in node.targets if isinstance(target, ast.Name)}


def _misread(tree: ast.AST) -> list[str]:
    """``config.<section>.<key>`` reads (or ``<alias>.<key>`` after ``alias = config.<section>``)
    whose section or key the table does not have."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and _is_config(node.value.value)):
            continue
        section, key = node.value.attr, node.attr
        if section in FIELDS and key not in FIELDS[section]:
            found.append(f"line {node.lineno}: config.{section}.{key} is no key of [{section}]")
        elif section not in FIELDS and section not in CONFIG_ATTRS:
            found.append(f"line {node.lineno}: config.{section} is no section")
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        aliases = _section_aliases(function)
        found += [f"line {node.lineno}: {node.value.id}.{node.attr} is no key of [{aliases[node.value.id]}]"
                  for node in ast.walk(function) if isinstance(node, ast.Attribute)
                  and isinstance(node.value, ast.Name) and node.value.id in aliases
                  and node.attr not in FIELDS[aliases[node.value.id]]]
    return sorted(set(found), key=lambda f: int(f.split()[1].rstrip(":")))


def test_every_config_value_the_code_reads_is_a_key() -> None:
    misread = [f"{path.relative_to(PACKAGE)} {finding}" for path in sorted(PACKAGE.rglob("*.py"))
               for finding in _misread(ast.parse(path.read_text(), filename=str(path)))]
    assert not misread, "\n".join(misread)


def test_the_check_sees_a_mistyped_section_or_key() -> None:
    tree = ast.parse("config.server.prot\nself.config.sever.port\nconfig.server.port\nconfig.data_dir.parent\n"
                     "def f(config):\n    llm = config.llm\n    return llm.model, llm.modle\n")
    assert _misread(tree) == ["line 1: config.server.prot is no key of [server]", "line 2: config.sever is no section",
                              "line 7: llm.modle is no key of [llm]"]


def test_the_client_section_is_the_one_declaration_of_its_keys() -> None:
    """client/ may not import config: it types the [client] section with the class config uses."""
    assert SECTIONS["client"] is ClientSection
    assert BreakerPolicy.from_section.__annotations__["client"] == "ClientSection"
    assert ClientSettings.from_section.__annotations__["client"] == "ClientSection"


def test_the_code_reads_values_only_through_the_typed_sections() -> None:
    """No ``config.get("section.key")`` (a cast at each call site, a typo found when it runs)."""
    calls = [f"{path.relative_to(PACKAGE)} line {node.lineno}" for path in sorted(PACKAGE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
             and _is_config(node.func.value) and node.args and isinstance(node.args[0], ast.Constant)
             and str(node.args[0].value) in {k.dotted for k in KEYS}]
    assert not calls, "\n".join(calls)


def test_an_unknown_key_or_a_wrong_type_fails_when_the_config_is_built(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown config key server.prot"):
        load_config(tmp_path, {"server.prot": 1}, environ={})
    with pytest.raises(ConfigError, match="config key server.port must be of type int"):
        load_config(tmp_path, environ={"AI_MEMORY_SERVER_PORT": "many"})
