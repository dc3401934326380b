"""The docs site's Sphinx configuration: `make docs` builds it into site/ with warnings as
errors (tests/test_docs.py builds it too). Pages are Markdown, read by MyST-Parser; the theme
is Furo. The reference sections are generated from the code by the extension docs/generated.py.
The site makes no request to anyone, at build time or when read: no web fonts, no CDN, and the
search index is a local file, so site/index.html works opened from disk."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
for path in (DOCS, DOCS.parent):  # the extension beside this file; this checkout's ai_memory
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import ai_memory  # noqa: E402

project = "ai-memory"
release = version = ai_memory.__version__

extensions = ["myst_parser", "generated"]
source_suffix = {".md": "markdown"}
root_doc = "index"

# [text](page.md#a-heading) resolves to the heading's GitHub-style slug, as on GitHub; an
# anchor that names no heading (down to ###) is a warning, so it fails the build.
myst_heading_anchors = 3

html_theme = "furo"
html_title = "ai-memory"
html_copy_source = False  # the Markdown without its generated sections: nothing to read there
html_show_sourcelink = False
html_show_sphinx = False
html_show_copyright = False
html_use_index = False  # no page adds index entries: an empty index page would be all it had
