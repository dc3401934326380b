"""``ai-memory install-rules`` / ``uninstall-rules``: teach an agent when to use memory.

Writes the guidance of ``core.guidance`` as one delimited block into the project's CLAUDE.md,
AGENTS.md or GEMINI.md (``ai_memory.client.rules_file`` does the editing).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ai_memory.cli.common import config_from
from ai_memory.cli.file_changes import apply_and_report, print_diffs
from ai_memory.client.agent_settings import AGENTS

INSTALL_HELP = "write ai-memory's usage rules into the instructions file the agent reads (CLAUDE.md, AGENTS.md, ...)"
UNINSTALL_HELP = "remove ai-memory's rules block from the instructions file the agent reads"
EXAMPLE = "example: ai-memory {verb} --agent claude --dry-run"


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    for verb, help_text in (("install-rules", INSTALL_HELP), ("uninstall-rules", UNINSTALL_HELP)):
        p = sub.add_parser(verb, parents=[common], help=help_text, description=help_text,
                           epilog=EXAMPLE.format(verb=verb))
        p.add_argument("--agent", required=True, choices=AGENTS,
                       help="claude: CLAUDE.md, gemini: GEMINI.md, qwen: QWEN.md, cline: .clinerules/ai-memory.md; "
                            "codex, cursor, copilot, opencode: AGENTS.md")
        p.add_argument("--dir", "--project-dir", dest="dir",
                       help="where the file lives (default: the git root of the current directory, else it)")
        p.add_argument("--dry-run", action="store_true", help="print a diff and write nothing")
        p.set_defaults(run=run, rules_verb=verb, usage=p.error)


def run(args: argparse.Namespace) -> int:
    from ai_memory.client import rules_file
    from ai_memory.core.guidance import rules_block

    directory = Path(args.dir).expanduser().resolve() if args.dir else rules_file.project_root(Path.cwd())
    if not directory.is_dir():
        args.usage(f"{directory} is not a directory")
    path = rules_file.rules_path(args.agent, directory)
    if args.rules_verb == "install-rules":
        change = rules_file.plan_install(path, rules_block())
    else:
        change = rules_file.plan_uninstall(path)
    if args.dry_run:
        print_diffs([change])
    else:
        apply_and_report([change], config_from(args).data_dir)
    return 0
