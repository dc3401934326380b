"""Running the ``git`` command where a remote, a bundle or a repository may be hostile.

Every call ai-memory makes to git (fetch, push, bundle, restore) starts with ``HARDENED``: no
hook of any repository runs, no fsmonitor command, no ``ext::``/``fd::`` transport (they run
arbitrary commands), and every object received is checked by git's fsck (``..``, ``.git`` and
other malformed tree entries are refused before anything reaches the object store). Positional
arguments come after ``--``, so nothing a caller passes is ever read as an option.

``check_remote`` decides what may be named as a sync remote at all.
"""

from __future__ import annotations

import re
from pathlib import Path

from ai_memory.core.errors import InputError

HARDENED: tuple[str, ...] = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "protocol.ext.allow=never",
    "-c", "protocol.fd.allow=never",
    "-c", "fetch.fsckObjects=true",
    "-c", "transfer.fsckObjects=true",
    "-c", "receive.fsckObjects=true",
)
URL_SCHEMES = frozenset({"https", "http", "ssh", "git", "file", "git+ssh", "ssh+git"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_SCP_LIKE = re.compile(r"(?:[A-Za-z0-9._%+-]+@)?(?:[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]):(?!//)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_remote(remote: str) -> str:
    """The remote, stripped, if it is a URL of a known scheme, an scp-like ``user@host:path``
    or an existing local path; InputError (400) for anything else: an option (``-…``), a
    remote-helper transport (``ext::…``, ``fd::…``), control characters."""
    url = remote.strip()
    if not url:
        raise InputError("no git remote to sync with", detail="set sync.remote in config.toml or pass --remote URL")
    if url.startswith("-") or _CONTROL.search(url):
        raise InputError("bad git remote", detail="a remote never starts with '-' nor holds control characters")
    scheme = _SCHEME.match(url)
    if scheme is not None:
        if scheme.group(1).lower() not in URL_SCHEMES:
            raise InputError("bad git remote", detail=f"scheme {scheme.group(1)!r} is not one of "
                             + ", ".join(sorted(URL_SCHEMES)))
        return url
    if "::" in url.split("/", 1)[0]:
        raise InputError("bad git remote", detail="remote-helper transports (<helper>::<address>) are refused")
    if _SCP_LIKE.match(url) and not Path(url).exists():
        return url
    if not Path(url).expanduser().exists():
        raise InputError("bad git remote", detail=f"{url[:200]!r} is no URL and no existing path")
    return url
