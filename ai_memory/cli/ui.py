"""``ai-memory ui``: open the daemon's web view in a browser, through a one-time login link."""

from __future__ import annotations

import argparse
import sys

from ai_memory.cli.common import print_json
from ai_memory.cli.daemon_args import api_from

HELP = "open the web view (search, pages, sessions, handoffs, status) with a one-time login link"
EXAMPLE = "example: ai-memory ui; on a machine without a browser: ai-memory ui --no-open"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ui", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("--no-open", action="store_true", help="print the link instead of opening a browser")
    p.add_argument("--json", action="store_true", help="print {url, expires_in_s} and open nothing")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    api = api_from(args)
    login = api.ui_login()
    url = api.url.rstrip("/") + login["path"]
    if args.json:
        print_json({"url": url, "expires_in_s": login["expires_in_s"]})
        return 0
    opened = False
    if not args.no_open:
        import webbrowser

        opened = webbrowser.open(url)
    print(url)
    how = "opened in your browser" if opened else "open it in a browser on this machine"
    print(f"{how}: the link works once, within {login['expires_in_s']:.0f} s", file=sys.stderr)
    return 0
