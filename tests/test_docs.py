"""The docs keep up with the code: every CLI verb, config key and MCP tool is on the docs site
(its reference sections are generated from the code by docs/generated.py, so these tests check that
each one has the words the page is made of), the site builds with no warning, and the README
stays a short front door."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ai_memory.client.agent_settings import AGENTS
from ai_memory.config import KEYS, Key
from ai_memory.core.own_tools import TOOL_NAMES
from conftest import REPO

README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"


def _generated() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generated", DOCS / "generated.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOKS = _generated()
COMMANDS = dict(HOOKS.cli_commands())
CLI_PAGE = HOOKS.cli_reference()
CONFIG_PAGE = HOOKS.config_reference()
MCP_PAGE = HOOKS.mcp_reference()


def test_the_site_builds_with_no_warning(tmp_path: Path) -> None:
    """The build `make docs` runs (Sphinx, warnings as errors): a broken link or anchor, a page in
    no toctree, a marker no generator knows fail it. Then the site has every page in its nav, the
    generated sections in place of their markers, and nothing loaded from another host."""
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-b", "html",
                           "-d", str(tmp_path / "doctrees"), str(DOCS), str(site)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                          cwd=REPO, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNING" not in output and "ERROR" not in output and "build succeeded." in output, output
    config = (site / "reference" / "config.html").read_text()
    assert "server.port" in config and "<!-- generated" not in config
    assert "<h3>GET /v1/openapi.json" in (site / "reference" / "http-api.html").read_text()
    home = (site / "index.html").read_text()
    for page in sorted(DOCS.rglob("*.md")):
        html = page.relative_to(DOCS).with_suffix(".html").as_posix()
        assert (site / html).is_file() and f'href="{html}"' in home or html == "index.html", f"{html} is not in the nav"
    for page in site.rglob("*.html"):
        assert not re.search(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(?:https?:)?//', page.read_text()), page
    assert (site / "searchindex.js").is_file()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_cli_verb_is_documented(command: str) -> None:
    parser = COMMANDS[command]
    assert parser.description, f"`ai-memory {command}` has no description: the reference shows it"
    assert parser.epilog and "ai-memory" in parser.epilog, f"`ai-memory {command} --help` shows no example"
    assert re.search(rf"^#+ ai-memory {command}$", CLI_PAGE, re.M), f"`ai-memory {command}` is not on the CLI page"


@pytest.mark.parametrize("key", KEYS, ids=[k.dotted for k in KEYS])
def test_every_config_key_is_documented(key: Key) -> None:
    assert key.doc.strip(), f"config key {key.dotted} has no doc"
    assert f"| `{key.dotted}` |" in CONFIG_PAGE, f"config key {key.dotted} is missing from the configuration page"


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_every_mcp_tool_is_documented(tool: str) -> None:
    [entry] = [t for t in HOOKS.mcp_tools() if t["name"] == tool]
    assert entry["description"].strip() and entry["annotations"].get("title"), tool
    for name, prop in entry["inputSchema"].get("properties", {}).items():
        assert prop.get("description"), f"{tool}'s argument {name} has no description"
    assert f"\n## {tool}\n" in MCP_PAGE, f"MCP tool {tool} is missing from the MCP tools page"


def test_the_lists_are_not_empty() -> None:
    """A docs test over nothing would pass forever."""
    assert len(COMMANDS) > 20 and len(KEYS) > 15 and len(TOOL_NAMES) == 20
    assert [t["name"] for t in HOOKS.mcp_tools()] == list(TOOL_NAMES)


def test_every_generated_section_has_one_page() -> None:
    assert sorted(HOOKS.markers_in(DOCS)) == sorted(HOOKS.GENERATORS)
    with pytest.raises(ValueError, match="no generator named 'nope'"):
        HOOKS.expand("<!-- generated: nope -->\n", "page.md")


def test_the_http_api_section_renders_an_openapi_document() -> None:
    """The renderer reads what an OpenAPI document says: parameters, a body's fields, the answers."""
    spec = {"paths": {"/v1/pages": {
        "get": {"summary": "one page", "parameters": [{"name": "path", "in": "query", "required": True, "description": "its path"}],
                "responses": {"200": {"description": "the page"}, "404": {"description": "no such page"}}},
        "post": {"summary": "store a memory",
                 "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Memory"}}}},
                 "responses": {"201": {"description": "stored"}}}}},
        "components": {"schemas": {"Memory": {"required": ["text"], "properties": {
            "text": {"type": "string", "maxLength": 100, "description": "the memory"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []}}}}}}
    page = HOOKS.openapi_reference(spec)
    assert "### GET /v1/pages" in page and "### POST /v1/pages" in page
    assert "| `path` | query | yes | its path |" in page and "| `404` | no such page |" in page
    assert "| `text` | string | required | the memory (up to 100 characters) |" in page
    assert "| `tags` | list of string | `[]` |  |" in page


def test_the_http_api_page_has_every_route_of_the_wire_contract() -> None:
    """The reference is the OpenAPI document the daemon serves: a route added to core.wire is on it."""
    from ai_memory.core.wire import ROUTES

    section = HOOKS.http_api_reference()
    for route in ROUTES:
        assert f"### {route.method} {route.path}\n" in section, f"{route.method} {route.path} is not on the page"
    assert "| `k` | integer |" in section  # a body's fields, with their types


def test_every_benchmark_is_on_the_benchmarks_page() -> None:
    page = (DOCS / "benchmarks.md").read_text()
    for script in sorted((REPO / "benchmarks").glob("*.py")):
        assert f"`{script.name}`" in page, f"{script.name} is missing from docs/benchmarks.md"


def test_every_reranker_feature_is_documented_with_its_weight() -> None:
    """The search guide's table of features is the registry's: a new feature or weight changes both."""
    from ai_memory.retrieval.features import FEATURES

    guide = (DOCS / "guides" / "search.md").read_text()
    for feature in FEATURES:
        assert f"| `{feature.name}` | {feature.weight} |" in guide, feature.name
    table = guide.split("| feature | weight | what it measures |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \|", table, re.M)
    assert rows == [f.name for f in FEATURES], "the guide's table lists a feature the registry lacks, or out of order"


def test_the_readme_is_a_short_front_door() -> None:
    lines = README.splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move the detail into docs/"
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "serve"], ["make", "test"]]
    assert 'export PATH="' in README and "/.venv/bin:$PATH" in README
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):  # a screenshot of the web view, there to see
        assert (REPO / image).is_file(), image
    assert "docs/images/web-search.png" in README


@pytest.mark.parametrize("agent", AGENTS)
def test_the_readme_has_a_quick_start_per_agent(agent: str) -> None:
    for verb in ("install-hooks", "install-mcp", "install-rules"):
        assert f"ai-memory {verb} --agent {agent}" in README, f"README's quick start lacks {verb} for {agent}"


def test_the_readmes_links_into_the_docs_resolve() -> None:
    links = re.findall(r"\]\(((?:docs/|ARCHITECTURE)[^)#]*)", README)
    assert len(links) > 10
    for link in links:
        if link.endswith(".png"):
            continue  # the screenshot is added with the web view's work
        assert (REPO / link).exists(), f"README links to {link}, which does not exist"


def test_the_architecture_page_is_architecture_md() -> None:
    source = (REPO / "ARCHITECTURE.md").read_text()
    assert source.startswith("# Architecture\n")
    assert HOOKS.architecture() == source.split("\n", 1)[1].lstrip("\n")


def _declared() -> list[str]:
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
