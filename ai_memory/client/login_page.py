"""The local page that takes a web-view login code to the browser without a command line.

A URL handed to a browser launcher is in that process's ``argv``, which every local user reads
in ``/proc/<pid>/cmdline``: a code there was redeemed by another process first. Instead the code
goes into a page only this user can read (0600, in a 0700 folder of the data dir) whose form
posts it to the daemon; the browser is handed the page's ``file://`` path, which holds no
secret. The page is removed once the code is used or expired, and any left by a run that was
killed are removed by the next one.
"""

from __future__ import annotations

import html
import os
import secrets
import time
from pathlib import Path

FOLDER = "ui-login"
STALE_S = 600.0  # a page older than this holds a code long expired


def write_login_page(data_dir: Path, action: str, code: str) -> Path:
    """A 0600 page whose form posts ``code`` to ``action`` (at once where JavaScript runs)."""
    folder = data_dir / FOLDER
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    _remove_stale(folder)
    path = folder / f"login-{secrets.token_hex(8)}.html"
    text = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>ai-memory: log in</title></head>\n'
        f'<body><form method="post" action="{html.escape(action)}">'
        f'<input type="hidden" name="code" value="{html.escape(code)}">'
        '<p>Opening the ai-memory web view… <button type="submit">Continue</button></p></form>\n'
        "<script>document.forms[0].submit()</script></body></html>\n"
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def _remove_stale(folder: Path) -> None:
    now = time.time()
    for old in folder.glob("login-*.html"):
        try:
            if now - old.lstat().st_mtime > STALE_S:
                old.unlink()
        except OSError:
            pass
