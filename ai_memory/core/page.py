"""Wiki pages: markdown with YAML frontmatter, parsed leniently and rendered back.

Files are the truth, and people edit them by hand, so ``parse_page`` never raises: a broken
page (bad YAML, binary, huge, not UTF-8) is read as far as possible and carries its problems.
Unknown frontmatter keys are kept verbatim.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

from ai_memory.core.links import Body, parse_body

GLOBAL_PROJECT = "_global"
PAGE_TYPES = ("Session Summary", "Decision", "Gotcha", "Procedure", "Concept", "Rule", "Note",
              "Preference", "Fact", "Episode")
TIERS = ("episodic", "semantic", "procedural")
RELATIONS = ("causes", "fixes", "contradicts")
FAMILIES = ("sessions", "decisions", "gotchas", "procedures", "concepts", "notes", "rules", "facts",
            "preferences", "episodes")
# The kinds of structured memory an agent can store: kind → (page type, family folder).
MEMORY_KINDS = {
    "fact": ("Fact", "facts"), "decision": ("Decision", "decisions"), "preference": ("Preference", "preferences"),
    "episode": ("Episode", "episodes"), "gotcha": ("Gotcha", "gotchas"), "procedure": ("Procedure", "procedures"),
    "rule": ("Rule", "rules"), "concept": ("Concept", "concepts"), "note": ("Note", "notes"),
}
# A page's type by its kind as people name it (``decision``), compiled sessions included, and back.
TYPE_OF_KIND = {kind: page_type for kind, (page_type, _) in MEMORY_KINDS.items()} | {"session": "Session Summary"}
KIND_OF_TYPE = {page_type: kind for kind, page_type in TYPE_OF_KIND.items()}
SCOPES = ("project", GLOBAL_PROJECT, "private")
MAX_PAGE_BYTES = 1024 * 1024
MAX_FRONTMATTER_BYTES = 64 * 1024
DEFAULT_TIER = {"Session Summary": "episodic", "Episode": "episodic", "Procedure": "procedural",
                "Rule": "procedural"}

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)


@dataclass(frozen=True)
class ParsedPage:
    """What the index needs from one page file."""

    path: str
    meta: dict[str, Any]
    body: str
    type: str
    title: str
    tier: str
    project: str
    summary: str
    tags: list[str]
    entities: list[str]
    links: list[tuple[str, str]]  # (target, kind): kind is link or a relation name
    content_hash: str
    problems: list[str] = field(default_factory=list)

    def get(self, key: str) -> Any:
        return self.meta.get(key)

    @property
    def generated(self) -> bool:
        """A file ai-memory derives (a project's index.md): never indexed as a page, and the
        only kind of file ai-memory rewrites without being asked."""
        return self.meta.get("generated") is True


def content_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class _NoAliasLoader(yaml.SafeLoader):
    """Safe YAML without anchors' aliases: ``*a`` repeated in nested lists expands a 340-byte
    page into megabytes (a "billion laughs"); frontmatter never needs one. Without aliases the
    parsed value grows with the text, which MAX_FRONTMATTER_BYTES bounds."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = cast(Any, self).peek_event()  # PyYAML's stubs leave the parser untyped
            raise yaml.composer.ComposerError(None, None, "YAML aliases (*name) are not allowed in frontmatter",
                                              event.start_mark)
        return super().compose_node(parent, index)


# libyaml's parser where PyYAML was built with it: eight times faster on a page's frontmatter,
# which a reindex reads for every page. It expands aliases, so it reads only a text that cannot
# hold one (every alias begins with "*"); the rest goes through the guard above.
_FAST_LOADER: type | None = getattr(yaml, "CSafeLoader", None)


def _loader_for(source: str) -> type:
    return _FAST_LOADER if _FAST_LOADER is not None and "*" not in source else _NoAliasLoader


# Frontmatter nests a list or a mapping a level or two. libyaml reads a thousand levels, and what
# is stored (JSON in the index, YAML when a page is rewritten) recurses once a level: a page nested
# deeper than this is broken, not a RecursionError in the middle of a reindex.
MAX_FRONTMATTER_DEPTH = 64


def _depth(value: Any) -> int:
    """How deeply lists and mappings nest in a parsed value (read without recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict):
            todo += [(v, level + 1) for v in item.values()]
        elif isinstance(item, list):
            todo += [(v, level + 1) for v in item]
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_FRONTMATTER_DEPTH:
            break
    return deepest


def split_frontmatter(text: str) -> tuple[dict[str, Any], str, list[str]]:
    """(frontmatter, body, problems); a page without frontmatter has an empty dict."""
    match = _FRONTMATTER.match(text)
    if not match:
        return {}, text, []
    body = text[match.end():]
    source = match.group(1)
    if len(source.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        return {}, body, [f"bad frontmatter: larger than {MAX_FRONTMATTER_BYTES} bytes (not read)"]
    try:
        meta = yaml.load(source, Loader=_loader_for(source))  # noqa: S506 - a safe loader, without aliases
    except yaml.YAMLError as exc:
        return {}, body, [f"bad frontmatter: {str(exc).splitlines()[0]}"]
    except RecursionError:  # [[[[... nested past the parser's stack
        return {}, body, ["bad frontmatter: nested too deeply"]
    except UnicodeError:  # a lone surrogate the parser cannot read
        return {}, body, ["bad frontmatter: not valid text"]
    if _depth(meta) > MAX_FRONTMATTER_DEPTH:
        return {}, body, ["bad frontmatter: nested too deeply"]
    if meta is None:
        return {}, body, []
    if not isinstance(meta, dict):
        return {}, body, ["bad frontmatter: not a mapping"]
    return {str(k): v for k, v in meta.items()}, body, []


def _str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int, float)):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float))]
    return []


def _relations(meta: dict[str, Any], problems: list[str]) -> list[tuple[str, str]]:
    raw = meta.get("relations")
    if raw is None:
        return []
    if not isinstance(raw, dict):
        problems.append("relations is not a mapping (skipped)")
        return []
    links = []
    for kind, targets in raw.items():
        if kind not in RELATIONS:
            problems.append(f"unknown relation {kind!r} (skipped)")
            continue
        links += [(t, str(kind)) for t in _str_list(targets)]
    return links


def decode(raw: bytes, problems: list[str]) -> str:
    if b"\x00" in raw[:8192]:
        problems.append("binary file")
        return ""
    if len(raw) > MAX_PAGE_BYTES:
        problems.append(f"too large ({len(raw)} bytes; indexed the first {MAX_PAGE_BYTES})")
        raw = raw[:MAX_PAGE_BYTES]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        problems.append("not UTF-8 (undecodable bytes replaced)")
        return raw.decode("utf-8", "replace")


def is_generated(raw: bytes) -> bool:
    """``parse_page(...).generated`` from the frontmatter alone: a project's index lists every
    page of the project, and its body need not be parsed to know that ai-memory derived it."""
    meta = split_frontmatter(decode(raw, []))[0]
    return meta.get("generated") is True


def parse_page(path: str, raw: bytes, body_links: bool = True) -> ParsedPage:
    """Parse a page file; never raises. ``path`` is relative to the wiki, with '/' separators.

    A file without frontmatter, or whose frontmatter names no type, is a plain note: a Note
    titled by its first heading (else its file name), with no problem to report. Without
    ``body_links`` the links written in the body are not read (``links`` holds the
    frontmatter's relations only): a past version in the page history keeps no links, and
    reading them was most of the time a rebuild spent on each version."""
    problems: list[str] = []
    text = decode(raw, problems)
    meta, body, fm_problems = split_frontmatter(text)
    problems += fm_problems
    page_type = str(meta.get("type") or "Note")
    if page_type not in PAGE_TYPES:
        problems.append(f"unknown type {page_type!r}")
    # the parser only runs where it can find something: links need a "[", a title a heading
    parsed = parse_body(body) if (body_links and "[" in body) or not meta.get("title") else Body([], None)
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    title = str(meta.get("title") or parsed.first_heading or stem)[:200]
    tier = str(meta.get("tier") or DEFAULT_TIER.get(page_type, "semantic"))
    project = str(meta.get("project") or (path.split("/", 1)[0] if "/" in path else GLOBAL_PROJECT))
    return ParsedPage(
        path=path, meta=meta, body=body, type=page_type, title=title, tier=tier, project=project,
        summary=str(meta.get("summary") or "")[:2000], tags=_str_list(meta.get("tags")),
        entities=_str_list(meta.get("entities")),
        links=_relations(meta, problems) + ([(target, "link") for target in parsed.links] if body_links else []),
        content_hash=content_hash(raw), problems=problems,
    )


def render_page(meta: dict[str, Any], body: str) -> str:
    """Frontmatter (keys in the given order) and body, as the file's text."""
    dumped = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{dumped}---\n{body if body.startswith(chr(10)) else chr(10) + body}"


_PROJECT_LINE = re.compile(r"^project:[^\r\n]*", re.M)  # the line's own ending (LF or CRLF) is kept


def with_project(text: str, old: str, new: str) -> str | None:
    """The page with its frontmatter's ``project: old`` line made ``project: new`` and not one
    other byte changed; None when the page carries no such key (a person's note that takes its
    project from its folder) or the line cannot be changed exactly (then it is left alone)."""
    match = _FRONTMATTER.match(text)
    meta, _, problems = split_frontmatter(text)
    if match is None or problems or str(meta.get("project")) != old:
        return None
    lines = list(_PROJECT_LINE.finditer(match.group(1)))
    if len(lines) != 1:
        return None
    start = match.start(1) + lines[0].start()
    line = yaml.safe_dump({"project": new}, width=1000, allow_unicode=True).strip()
    changed = text[:start] + line + text[match.start(1) + lines[0].end():]
    after, _, still = split_frontmatter(changed)
    return changed if not still and after == {**meta, "project": new} else None


def is_ours(meta: dict[str, Any]) -> bool:
    """Whether ai-memory wrote the page: its records carry an ``id`` (a person's note does not),
    and only such a page is ever re-rendered; another gets at most a line added or removed."""
    return meta.get("id") is not None


def with_line_added(text: str, key: str, value: Any) -> str | None:
    """The page with one frontmatter line ``key: value`` added at the end of its frontmatter and
    not one other byte changed; None when it has no frontmatter, has ``key`` already, or the line
    would not read back as exactly that (a person's note is then left alone)."""
    match = _FRONTMATTER.match(text)
    meta, _, problems = split_frontmatter(text)
    if match is None or problems or key in meta:
        return None
    newline = "\r\n" if "\r\n" in match.group(0) else "\n"
    line = yaml.safe_dump({key: value}, width=1000, allow_unicode=True).strip()
    end = match.end(1)
    changed = (text[:end] + newline + line + text[end:]) if match.group(1) else (text[:end] + line + newline + text[end:])
    after, _, still = split_frontmatter(changed)
    return changed if not still and after == {**meta, key: value} else None


def without_line(text: str, key: str, value: Any) -> str | None:
    """The page with its frontmatter line ``key: value`` removed, as ``with_line_added`` wrote it,
    and not one other byte changed; None when there is no such line."""
    match = _FRONTMATTER.match(text)
    meta, _, problems = split_frontmatter(text)
    if match is None or problems or meta.get(key) != value:
        return None
    line = yaml.safe_dump({key: value}, width=1000, allow_unicode=True).strip()
    block, base = match.group(1), match.start(1)
    found = [m for m in re.finditer(rf"^{re.escape(line)}[ \t]*$", block, re.M)]
    if len(found) != 1:
        return None
    at, end = base + found[0].start(), base + found[0].end()
    if found[0].end() == len(block) and found[0].start() > 0:  # the last line: the newline before it goes
        at -= 2 if text[at - 2:at] == "\r\n" else 1
    else:  # its own newline goes with it
        end += 2 if text[end:end + 2] == "\r\n" else 1 if text[end:end + 1] == "\n" else 0
    changed = text[:at] + text[end:]
    after, _, still = split_frontmatter(changed)
    expected = {k: v for k, v in meta.items() if k != key}
    return changed if not still and after == expected else None
