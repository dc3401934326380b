"""``ai-memory ui``: open the daemon's web view in a browser, through a one-time login code.

The browser is handed the ``file://`` path of a 0600 page that posts the code (``client.login_page``),
never a URL holding it: a launcher's command line is readable by every local user. The verb waits
until the code is used or expired, then removes the page.
"""

from __future__ import annotations

import argparse
import sys
import time

from ai_memory.cli.common import config_from, print_json
from ai_memory.cli.daemon_args import api_from

HELP = "open the web view (search, pages, sessions, handoffs, status) with a one-time login link"
EXAMPLE = "example: ai-memory ui; on a machine without a browser: ai-memory ui --no-open"
POLL_S = 0.5


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ui", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--no-open", action="store_true", help="print the link instead of opening a browser")
    p.add_argument("--json", action="store_true", help="print {url, expires_in_s} and open nothing")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    api = api_from(args)
    login = api.ui_login()
    link, ttl = api.url.rstrip("/") + login["path"], float(login["expires_in_s"])
    if args.json:
        print_json({"url": link, "expires_in_s": ttl})
        return 0
    if args.no_open:
        print(link)
        print(f"open it in a browser within {ttl:.0f} s, and confirm the login there", file=sys.stderr)
        return 0
    import webbrowser

    from ai_memory.client.login_page import write_login_page

    page = write_login_page(config_from(args).data_dir, api.url.rstrip("/") + "/ui/login", login["code"])
    try:
        if not webbrowser.open(page.as_uri()):
            print(f"no browser found: open {page.as_uri()} in a browser on this machine", file=sys.stderr)
        print(f"confirm the login in your browser within {ttl:.0f} s (the link works once)", file=sys.stderr)
        deadline = time.monotonic() + ttl
        while time.monotonic() < deadline:
            if not api.ui_login_pending(login["code"]):
                print("logged in", file=sys.stderr)
                return 0
            time.sleep(POLL_S)
    finally:
        page.unlink(missing_ok=True)
    print(f"the link was not used within {ttl:.0f} s: run ai-memory ui again", file=sys.stderr)
    return 1
