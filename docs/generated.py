"""The docs site's reference sections, made from the code each time the site is built.

A page holds its own prose and a marker, ``<!-- generated: NAME -->``, on a line of its own.
This module is a Sphinx extension (``docs/conf.py`` lists it): on Sphinx's ``source-read``
event, which hands over each page's Markdown source as a string before MyST parses it, the
marker is replaced with the Markdown that ``GENERATORS[NAME]`` renders, so the generated
section is parsed, linked and indexed for search like the hand-written prose around it.
Nothing generated is written to disk or committed, so it cannot go stale: the CLI section is
the parser's help, the configuration table is ``config.KEYS``, the MCP tools are
``mcp/catalog.json``, the HTTP API is the OpenAPI document ``core.openapi`` makes from the wire
contract (what the daemon serves at ``/v1/openapi.json``) and the architecture page is
``ARCHITECTURE.md``. A marker no generator knows, or a generator no page uses, fails the build.
The pages that hold a marker are read again on every build (``env-get-outdated``), so an
incremental build never keeps a section made from older code.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # document this checkout, whatever is installed
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
COMMON_FLAGS = ("--data-dir", "--url")


def text(value: str) -> str:
    """Plain text made safe for a Markdown table cell."""
    value = " ".join(str(value).split())
    for raw, safe in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("*", "\\*")):
        value = value.replace(raw, safe)
    return value


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# --- the command line -------------------------------------------------------------------------

def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {name: p for name, p in action.choices.items()}
    return {}


def cli_commands() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every verb as ``("search", parser)``, and every sub-verb as ``("handoff begin", parser)``."""
    from ai_memory.cli.main import build_parser

    for verb, parser in _subparsers(build_parser()).items():
        yield verb, parser
        for sub, child in _subparsers(parser).items():
            yield f"{verb} {sub}", child


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(prog=parser.prog, width=92)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _option_rows(parser: argparse.ArgumentParser, common_help: dict[str, str]) -> list[tuple[str, str]]:
    formatter = argparse.HelpFormatter(prog=parser.prog)
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings and common_help.get(action.option_strings[0]) == action.help:
            continue  # --data-dir and --url: said once, at the top of the page
        name = ", ".join(action.option_strings) if action.option_strings else (action.metavar or action.dest)
        if action.option_strings and action.nargs != 0:
            name += " " + (action.metavar or action.dest.upper())
        meaning = formatter._expand_help(action) if action.help else ""
        if action.choices and not isinstance(action.choices, dict):
            meaning += f" (one of: {', '.join(map(str, action.choices))})"
        rows.append((f"`{name}`", text(meaning)))
    return rows


def cli_reference() -> str:
    from ai_memory.cli.main import build_parser

    top = build_parser()
    common_help = {a.option_strings[0]: a.help for a in _subparsers(top)["status"]._actions
                   if a.option_strings and a.option_strings[0] in COMMON_FLAGS}
    out = []
    for command, parser in cli_commands():
        level = "###" if " " in command else "##"
        out.append(f"{level} ai-memory {command}\n")
        out.append(text(parser.description or "") + "\n")
        out.append(f"```text\n{_usage(parser)}\n```\n")
        rows = _option_rows(parser, common_help)
        if rows:
            out.append(table(("argument", "meaning"), rows) + "\n")
        subs = _subparsers(parser)
        if subs:
            out.append("Sub-commands: " + ", ".join(f"[`{s}`](#ai-memory-{command}-{s})" for s in subs) + ".\n")
        if parser.epilog:
            out.append(f"```text\n{parser.epilog.strip()}\n```\n")
    return "\n".join(out)


# --- configuration ----------------------------------------------------------------------------

TOML_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "list"}


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return json.dumps(value) if isinstance(value, list) else str(value)


def config_reference() -> str:
    from ai_memory.config import _ENV_ALIASES, KEYS

    aliases = {dotted: env for env, dotted in _ENV_ALIASES.items()}
    out = []
    for section in dict.fromkeys(k.section for k in KEYS):
        out.append(f"## [{section}]\n")
        rows = []
        for key in (k for k in KEYS if k.section == section):
            meaning = text(key.doc)
            if key.choices:
                meaning += " (one of: " + ", ".join(f"`{c}`" for c in key.choices) + ")"
            if key.between:
                meaning += f" (from {key.between[0]} to {key.between[1]})"
            env = f"`{key.env}`" + (f", `{aliases[key.dotted]}`" if key.dotted in aliases else "")
            rows.append((f"`{key.dotted}`", f"`{_toml(key.default)}`", TOML_TYPES[key.type], meaning, env))
        out.append(table(("key", "default", "type", "meaning", "environment"), rows) + "\n")
    return "\n".join(out)


# --- MCP tools --------------------------------------------------------------------------------

def _catalog() -> dict[str, Any]:
    return json.loads((ROOT / "ai_memory" / "mcp" / "catalog.json").read_text())


def mcp_tools() -> list[dict[str, Any]]:
    return _catalog()["lists"]["tools/list"]["tools"]


def schema_type(schema: dict[str, Any]) -> str:
    """A JSON schema's type in a few words: ``string``, ``list of string``, ``decision, rule``."""
    if "anyOf" in schema:
        kinds = [schema_type(s) for s in schema["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds) or "null"
    if "enum" in schema:
        return ", ".join(f"`{v}`" for v in schema["enum"])
    if schema.get("type") == "array":
        return "list of " + schema_type(schema.get("items", {}))
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    kind = schema.get("type", "any")
    return " or ".join(kind) if isinstance(kind, list) else kind


def _bounds(schema: dict[str, Any]) -> str:
    """A schema's limits in words: ``from 1 to 50``, ``up to 2000 characters``."""
    low, high = schema.get("minimum"), schema.get("maximum")
    found = []
    if low is not None and high is not None:
        found.append(f"from {low} to {high}")
    elif low is not None:
        found.append(f"at least {low}")
    elif high is not None:
        found.append(f"at most {high}")
    if "maxLength" in schema:
        found.append(f"up to {schema['maxLength']} characters")
    if "maxItems" in schema:
        found.append(f"up to {schema['maxItems']} items")
    found += [_bounds(option) for option in schema.get("anyOf", []) if option.get("type") != "null" and _bounds(option)]
    return "; ".join(found)


def _hints(annotations: dict[str, Any]) -> str:
    if annotations.get("readOnlyHint"):
        return "read-only"
    words = ["destructive" if annotations.get("destructiveHint") else "additive"]
    words.append("idempotent" if annotations.get("idempotentHint") else "not idempotent")
    return ", ".join(words)


def _fields(schema: dict[str, Any]) -> list[tuple[str, ...]]:
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        about = text(prop.get("description", ""))
        bounds = _bounds(prop)
        if bounds:
            about += f" ({text(bounds)})"
        if name in required:
            default = "required"
        elif "default" in prop:
            default = f"`{json.dumps(prop['default'])}`"
        else:
            default = ""
        rows.append((f"`{name}`", schema_type(prop), default, about))
    return rows


def mcp_reference() -> str:
    catalog = _catalog()
    out = ["## The server's instructions\n",
           "What every agent is told when it connects:\n",
           "```text\n" + catalog["initialize"]["instructions"].strip() + "\n```\n"]
    for tool in mcp_tools():
        annotations = tool.get("annotations", {})
        out.append(f"## {tool['name']}\n")
        out.append(f"**{text(annotations.get('title', tool['name']))}** · {_hints(annotations)}\n")
        out.append(text(tool.get("description", "")) + "\n")
        rows = _fields(tool.get("inputSchema", {}))
        if rows:
            out.append(table(("argument", "type", "default", "meaning"), rows) + "\n")
        returned = tool.get("outputSchema", {}).get("properties", {})
        if returned:
            out.append("Returns " + ", ".join(f"`{name}`" for name in returned) + ".\n")
    return "\n".join(out)


# --- the HTTP API -----------------------------------------------------------------------------

def openapi_document() -> dict[str, Any]:
    """The OpenAPI document the daemon serves, made from the wire contract."""
    import ai_memory
    from ai_memory.core.openapi import document

    return document(ai_memory.__version__)


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = spec
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _meaning(param: dict[str, Any]) -> str:
    """A parameter's description, with its bounds and default when its schema has them."""
    schema = param.get("schema", {})
    bounds = [f"{schema['minimum']} to {schema['maximum']}"] if "maximum" in schema else []
    bounds += [f"default {schema['default']}"] if "default" in schema else []
    return text(param.get("description", "") + (f" ({'; '.join(bounds)})" if bounds else ""))


def _operation(method: str, path: str, op: dict[str, Any], shared: list[dict[str, Any]],
               spec: dict[str, Any]) -> str:
    """One endpoint: its summary, parameters, JSON body and answers."""
    out = [f"### {method.upper()} {path}\n"]
    about = "\n\n".join(part for part in (op.get("summary", ""), op.get("description", "")) if part)
    if about:
        out.append(about.strip() + "\n")
    params = [(f"`{p['name']}`", p.get("in", ""), "yes" if p.get("required") else "", _meaning(p))
              for p in shared + op.get("parameters", [])]
    if params:
        out.append(table(("parameter", "in", "required", "meaning"), params) + "\n")
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body:
        out.append("Body:\n\n" + table(("field", "type", "default", "meaning"), _fields(_resolve(body, spec))) + "\n")
    answers = [(f"`{code}`", text(r.get("description", ""))) for code, r in op.get("responses", {}).items()]
    if answers:
        out.append(table(("status", "meaning"), answers) + "\n")
    return "\n".join(out)


def openapi_reference(spec: dict[str, Any]) -> str:
    """Every endpoint of an OpenAPI document, in its order."""
    return "\n".join(_operation(method, path, op, item.get("parameters", []), spec)
                     for path, item in spec.get("paths", {}).items()
                     for method, op in item.items() if method in ("get", "post", "put", "patch", "delete"))


def http_api_reference() -> str:
    return openapi_reference(openapi_document())


# --- architecture -----------------------------------------------------------------------------

def architecture() -> str:
    """ARCHITECTURE.md without its title (the page has its own)."""
    body = (ROOT / "ARCHITECTURE.md").read_text()
    return body.split("\n", 1)[1].lstrip("\n") if body.startswith("# ") else body


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "config-keys": config_reference,
    "mcp-tools": mcp_reference,
    "http-api": http_api_reference,
    "architecture": architecture,
}


def expand(markdown: str, where: str) -> str:
    """``markdown`` with each marker replaced by its generated section."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{where}: no generator named {name!r} (known: {', '.join(GENERATORS)})")
        return GENERATORS[name]().rstrip("\n")

    return MARKER.sub(one, markdown)


def markers_in(docs: Path) -> dict[str, str]:
    """Each marker's name → the page that holds it."""
    return {name: str(page.relative_to(docs)) for page in sorted(docs.rglob("*.md"))
            for name in MARKER.findall(page.read_text())}


# --- the Sphinx extension --------------------------------------------------------------------

def _fail(app: Any, message: str, location: Any = None) -> None:
    """An error on the page's line, as Sphinx reports a broken link, and a build that fails with
    it (warnings as errors or not); ``--keep-going`` goes on to list the others."""
    from sphinx.util import logging

    logging.getLogger(__name__).error(message, location=location)
    app.statuscode = 1


def _check_every_generator_is_used(app: Any) -> None:
    """``builder-inited``: a generator that no page shows is a mistake, as an unknown marker is."""
    unused = set(GENERATORS) - set(markers_in(Path(app.srcdir)))
    if unused:
        _fail(app, f"no page shows the generated sections {sorted(unused)}")


def _expand_page(app: Any, docname: str, source: list[str]) -> None:
    """``source-read``: ``source[0]`` is the page's Markdown, replaced in place."""
    unknown = [match for match in MARKER.finditer(source[0]) if match.group(1) not in GENERATORS]
    for match in unknown:
        line = source[0].count("\n", 0, match.start()) + 1
        _fail(app, f"no generator named {match.group(1)!r} (known: {', '.join(GENERATORS)})", (docname, line))
    if not unknown:
        source[0] = expand(source[0], docname)


def _reread_generated_pages(app: Any, env: Any, added: set[str], changed: set[str],
                            removed: set[str]) -> list[str]:
    """``env-get-outdated``: the code may have changed while the page's source did not."""
    pages = {Path(page).with_suffix("").as_posix() for page in markers_in(Path(app.srcdir)).values()}
    return sorted(page for page in pages if page in env.found_docs)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _check_every_generator_is_used)
    app.connect("source-read", _expand_page)
    app.connect("env-get-outdated", _reread_generated_pages)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
