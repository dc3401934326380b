"""Names as the wiki writes them: project names and path segments."""

from __future__ import annotations

import re

UNSORTED = "_unsorted"  # the project of a session that named none
_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def safe_name(value: str) -> str:
    """Lower case, runs outside [a-z0-9._-] become "-", no ".." and no "-" or "." at the ends."""
    return re.sub(r"\.{2,}", ".", _UNSAFE.sub("-", value.lower())).strip("-.")


_PAGE_SUFFIX = re.compile(r"\.(md|markdown)$")


def project_name(raw: str | None) -> str | None:
    """The wiki's name for a project someone spelled ``raw`` ("Acme API" → "acme-api"), or None.
    A name that reads as a page (``todo.md``, ``README.md``) becomes ``todo-md``: its folder
    would collide with the page at the wiki's top (on a case-insensitive disk, ``README.md``)."""
    name = safe_name(raw or "")[:64].strip("-.")
    return _PAGE_SUFFIX.sub(r"-\1", name) or None
