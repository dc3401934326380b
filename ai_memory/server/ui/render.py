"""Turning use-case results into HTML: the Jinja2 templates, page bodies as markdown with
highlighted code, and the diff between two versions of a page.

Page text is someone else's writing: markdown-it runs with raw HTML off (a ``<script>`` in a
page is shown, never run), its link check drops ``javascript:`` and ``data:`` targets, and
every template value is escaped unless this module marked it safe.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from ai_memory.core.hit_lines import answer_lines
from ai_memory.server.ui.display import FILTERS

MAX_DIFF_LINES = 400
MAX_HIGHLIGHT_CHARS = 100_000  # past this a code block is shown plain: lexing it would cost seconds
CODE_STYLES = ("default", "github-dark")  # highlighted code in a light page, and in a dark one


def code_css() -> str:
    """The highlighting rules: the light style, then the dark one for a system in dark mode (the
    page's own colours set the block's background)."""
    light, dark = (HtmlFormatter(style=name).get_style_defs(".highlight") for name in CODE_STYLES)
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n.highlight {{ background: transparent; }}\n"


def _highlighted(code: str, lang: str, _attrs: str) -> str:
    if not lang or len(code) > MAX_HIGHLIGHT_CHARS:
        return ""  # markdown-it escapes and wraps it itself
    try:
        lexer = get_lexer_by_name(lang.split()[0], stripnl=False)
    except ClassNotFound:
        return ""
    return f'<pre class="highlight"><code>{highlight(code, lexer, HtmlFormatter(nowrap=True))}</code></pre>'


def diff_lines(older: str, newer: str) -> list[tuple[str, str]]:
    """(kind, line) of a unified diff from ``older`` to ``newer``: kind is add, del, hunk or ctx."""
    out: list[tuple[str, str]] = []
    lines = difflib.unified_diff(older.splitlines(), newer.splitlines(), "before", "after", lineterm="", n=2)
    for line in list(lines)[2:]:
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "ctx")
        out.append((kind, line))
        if len(out) >= MAX_DIFF_LINES:
            out.append(("hunk", f"... cut at {MAX_DIFF_LINES} lines"))
            break
    return out


class Views:
    """The template environment and the markdown renderer of one app."""

    def __init__(self) -> None:
        self._md = MarkdownIt("commonmark", {"html": False, "highlight": _highlighted}).enable("table")
        self._env = Environment(loader=PackageLoader("ai_memory.server.ui", "templates"),
                                autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
        self._env.filters["markdown"] = self.markdown
        self._env.filters["marked"] = marked
        self._env.filters.update(FILTERS)
        self._env.globals["answer_lines"] = answer_lines
        self.pygments_css = code_css()

    def markdown(self, text: str | None) -> Markup:
        return Markup(self._md.render(text or ""))  # noqa: S704 - raw HTML is off: markdown-it escaped it

    def render(self, name: str, context: Mapping[str, Any]) -> str:
        return self._env.get_template(name).render(**context)


def marked(text: str | None, highlights: list[Any] | None) -> Markup:
    """A snippet with the query's words in <mark>: ``highlights`` are [start, end] offsets."""
    text = text or ""
    out, at = [], 0
    for start, end in sorted((int(h[0]), int(h[1])) for h in highlights or [] if len(h) == 2):
        if start < at or end > len(text):
            continue
        out += [str(escape(text[at:start])), f"<mark>{escape(text[start:end])}</mark>"]
        at = end
    out.append(str(escape(text[at:])))
    return Markup("".join(out))  # noqa: S704 - every piece above was escaped
