"""Links in a page, read as Obsidian reads them, and resolved the way Obsidian resolves them.

Bodies are parsed with markdown-it (CommonMark, plus tables) and a small inline rule of ours
for wikilinks: ``[[target]]``, ``[[target#heading|shown]]`` and the embed ``![[file.png]]``.
So a ``[[ -f "$x" ]]`` in a code block or a `` `[[ $a == b ]]` `` code span is no link, as in
Obsidian. Markdown links ``[text](path)`` count when they point inside the vault (no scheme,
not an anchor of the same page); their paths are URL-decoded.

A target resolves (``Vault.resolve``) as Obsidian's link resolution does: relative to the
linking page's folder, then as a path from the vault's root, then by a path the target ends
(``[[sub/note]]``) or, for a bare name, by file name anywhere; case does not matter, and a
name without an extension means the ``.md`` file. Besides, a note's frontmatter ``aliases``
are names it answers to (``[[AI]]`` for a note listing ``aliases: [AI]``). Any file counts,
not only pages: ``![[diagram.png]]`` resolves to ``attachments/diagram.png``. ai-memory's own
cross-project form ``[[project:path]]`` means ``project/path``.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_CROSS_PROJECT = re.compile(r"^([a-z0-9._-]+):([^/:].*)$")


@dataclass(frozen=True)
class Body:
    """What a page's body holds for the index: its link targets and its first heading."""

    links: list[str]
    first_heading: str | None


def _wikilink(state: StateInline, silent: bool) -> bool:
    """``[[...]]`` or ``![[...]]`` on one line, without a nested ``[[``."""
    start = state.pos
    embed = state.src.startswith("!", start)
    opening = start + 1 if embed else start
    if not state.src.startswith("[[", opening):
        return False
    end = state.src.find("]]", opening + 2)
    inner = state.src[opening + 2:end] if end != -1 else ""
    if end == -1 or not inner.strip() or "\n" in inner or "[[" in inner:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"target": inner, "embed": embed}
    state.pos = end + 2
    return True


@lru_cache(maxsize=1)
def markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table")
    md.inline.ruler.before("link", "wikilink", _wikilink)
    return md


def wikilink_target(inner: str) -> str:
    """The page or file a wikilink's inside names: no ``|shown``, ``#heading`` or ``^block``."""
    target = inner.split("|", 1)[0].rstrip("\\")  # in a table the pipe is escaped: [[a\|b]]
    return re.split(r"[#^]", target, maxsplit=1)[0].strip()


def markdown_target(href: str) -> str | None:
    """A markdown link's vault path (decoded, no anchor), or None when it leaves the vault."""
    href = href.strip()
    if not href or href.startswith("#") or _SCHEME.match(href) or href.startswith("//"):
        return None
    return unquote(href.split("#", 1)[0].split("?", 1)[0]).strip() or None


def parse_body(body: str) -> Body:
    """The link targets (in order, repeats kept) and the first heading's text."""
    links: list[str] = []
    heading: str | None = None
    tokens = markdown().parse(body)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and heading is None and i + 1 < len(tokens):
            heading = inline_text(tokens[i + 1].children or []).strip() or None
        for child in token.children or []:
            found = _child_target(child)
            if found:
                links.append(found)
    return Body(links, heading)


def _child_target(token: Any) -> str | None:
    if token.type == "wikilink":
        return wikilink_target(token.meta["target"]) or None  # "" is a heading of this page
    if token.type == "link_open":
        return markdown_target(str(token.attrGet("href") or ""))
    if token.type == "image":
        return markdown_target(str(token.attrGet("src") or ""))
    return None


def inline_text(children: Iterable[Any]) -> str:
    """Inline tokens as the text a reader sees: a wikilink shows its shown part or its target,
    an image its alt text."""
    out = []
    for token in children:
        if token.type == "wikilink":
            inner = token.meta["target"]
            out.append(inner.split("|", 1)[1] if "|" in inner else wikilink_target(inner))
        elif token.type in ("text", "code_inline", "image"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return "".join(out)


class Vault:
    """Every file of a vault (relative paths with '/', any extension) and the notes' aliases."""

    def __init__(self, files: Iterable[str], aliases: dict[str, list[str]] | None = None) -> None:
        self._paths: dict[str, str] = {}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in files:
            key = path.lower()
            self._paths[key] = path
            self._by_name[key.rsplit("/", 1)[-1]].append(path)
            if key.endswith(".md"):
                self._by_name[key.rsplit("/", 1)[-1][:-3]].append(path)
        self._aliases: dict[str, list[str]] = defaultdict(list)
        for path, names in (aliases or {}).items():
            for name in names:
                self._aliases[str(name).strip().lower()].append(path)

    def resolve(self, target: str, source: str = "") -> list[str]:
        """The files ``target`` (as a link in ``source``) may mean; empty when it is unresolved."""
        wanted = _CROSS_PROJECT.sub(r"\1/\2", target.strip()).lower()
        if not wanted:
            return []
        here = posixpath.dirname(source.lower())
        for candidate in (posixpath.normpath(posixpath.join(here, wanted)), wanted.lstrip("/")):
            for name in (candidate, f"{candidate}.md"):
                if name in self._paths:
                    return [self._paths[name]]
        leaf = wanted.rsplit("/", 1)[-1]
        named = self._by_name.get(leaf, [])
        if "/" in wanted.strip("/"):  # a partial path: a file whose path ends with it
            tail = "/" + wanted.strip("/")
            named = [p for p in named if p.lower().endswith(tail) or p.lower().endswith(tail + ".md")]
        return list(dict.fromkeys(named + self._aliases.get(wanted, [])))


def aliases_of(meta: dict[str, Any]) -> list[str]:
    """A note's frontmatter ``aliases`` (``alias`` too), a list or one name."""
    found: list[str] = []
    for key in ("aliases", "alias"):
        value = meta.get(key)
        items = value if isinstance(value, list) else [value] if value is not None else []
        found += [str(v) for v in items if isinstance(v, (str, int, float)) and str(v).strip()]
    return found
