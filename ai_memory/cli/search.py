"""``ai-memory search "..."``: ask memory a question from the terminal.

Output for people: readable snippets (the daemon strips markdown and JSON syntax; code is shown
as written), the query's
words marked where they are whole words (bold and coloured on a terminal, unmarked otherwise or
with NO_COLOR), and every line cut to the terminal's width.
"""

from __future__ import annotations

import argparse
import shutil
import sys

from ai_memory.cli.common import plural, print_json
from ai_memory.cli.daemon_args import api_from, cwd_project

HELP = "search memory (the current project plus _global by default)"
EXAMPLE = 'example: ai-memory search "what did we decide about the token TTL" --explain'
MARK, TITLE, DIM, RESET = "\x1b[1;33m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common], help=HELP, description=HELP, epilog=EXAMPLE)
    p.add_argument("query", help="what to look for, in words or identifiers")
    p.add_argument("--project", help="project to search (default: the one of the current directory)")
    p.add_argument("--all", action="store_true", help="search every project")
    p.add_argument("-k", type=int, default=10, help="how many hits (1-100, default 10)")
    p.add_argument("--explain", action="store_true", help="show how each score was made")
    p.add_argument("--as-of", help="answer from what memory knew then (ISO date or time)")
    p.add_argument("--json", action="store_true", help="print the raw reply as JSON")
    p.set_defaults(run=run, usage=p.error)


def run(args: argparse.Namespace) -> int:
    from ai_memory.config import color_wanted
    from ai_memory.core.hit_lines import answer_lines  # reads pages' kinds: yaml, not for building the parser

    api = api_from(args)
    project = args.project or cwd_project()
    reply = api.query(args.query, project=project, k=args.k, explain=args.explain, all=args.all, as_of=args.as_of)
    if args.json:
        print_json(reply)
        return 0
    # the terminal's width (or $COLUMNS); into a pipe without $COLUMNS, lines are not cut
    out = Lines(shutil.get_terminal_size((0, 0)).columns, color_wanted(sys.stdout.isatty()))
    hits, raw = reply["hits"], reply["raw_hits"]
    if reply.get("fallback") == "local":  # the server was not used: never pass this off as its answer
        out.plain(f"fallback: local (lexical, not semantic): {reply.get('note')}")
    if not hits and not raw:
        out.plain(_no_matches(api, args, project))
        return 0
    for i, hit in enumerate(hits, 1):
        pending = ", pending: not on the server yet" if hit.get("pending") else ""
        out.title(f"{i:>2}. ", hit["title"], f"  ({hit['type']}, {hit['project']}, score {hit['score']}{pending})")
        out.plain(f"    {hit['path'] or hit.get('id')}", dim=True)
        out.marked("    ", hit["snippet"], hit.get("highlights", []))
        for ev in answer_lines(hit):
            out.marked("      > ", ev["snippet"], ev.get("highlights", []))
        if args.explain and "explain" in hit:
            ex = hit["explain"]
            streams = ", ".join(f"{n} #{v['rank']}" for n, v in ex["streams"].items())
            feats = ", ".join(f"{k} {v}" for k, v in ex["features"].items() if v)
            out.plain(f"      streams: {streams}; authority {ex['authority']}; {feats}")
    if raw:
        out.plain("no page matched; observations:" if not hits else "observations:")
        for item in raw:
            out.marked(f"  - {item['occurred_at'][:16]} {item['event']} ({item['session_id']}): ", item["snippet"],
                       item.get("highlights", []))
    return 0


def _no_matches(api, args: argparse.Namespace, project: str | None) -> str:
    """Say when the project scope is what excluded everything: the same search elsewhere finds some."""
    if args.all or not project:
        return "no matches"
    elsewhere = api.query(args.query, all=True, k=20, as_of=args.as_of)
    found = len(elsewhere["hits"]) + len(elsewhere["raw_hits"])
    if not found:
        return "no matches"
    return f"no matches in project {project} — try --all ({plural(found, 'match', 'matches')} in other projects)"


class Lines:
    """Printing lines cut to the terminal's width, with highlights in colour or not at all."""

    def __init__(self, width: int, color: bool) -> None:
        self.width = max(40, width) if width > 0 else 1_000_000  # 0: no width to fit
        self.color = color

    def _fit(self, text: str, room: int) -> str:
        text = " ".join(text.split())
        return text if len(text) <= room else text[:max(1, room - 1)].rstrip() + "…"

    def plain(self, text: str, dim: bool = False) -> None:
        line = self._fit(text, self.width)
        print(f"{DIM}{line}{RESET}" if dim and self.color else line)

    def title(self, prefix: str, title: str, rest: str) -> None:
        line = self._fit(prefix + title + rest, self.width)
        if self.color and line.startswith(prefix + title):
            line = prefix + TITLE + title + RESET + line[len(prefix + title):]
        print(line)

    def marked(self, prefix: str, text: str, spans: list[list[int]]) -> None:
        """``text`` after ``prefix``, cut to the width, its spans marked when in colour."""
        room = self.width - len(prefix)
        shown = text if len(text) <= room else text[:max(1, room - 1)].rstrip() + "…"
        if not self.color:
            print(prefix + shown)
            return
        parts, at = [], 0
        for start, end in spans:
            if start >= len(shown) - (1 if shown is not text else 0) or start < at:
                continue
            end = min(end, len(shown))
            parts += [shown[at:start], MARK, shown[start:end], RESET]
            at = end
        print(prefix + "".join(parts) + shown[at:])
