"""The ai-memory rules block in an agent's instruction file: CLAUDE.md, AGENTS.md or GEMINI.md.

The block is delimited by ``RULES_BEGIN`` / ``RULES_END`` (``core.guidance``). Install puts it at
the end of the file (creating the file if needed) or replaces the block already there, so a
second run is byte-identical; uninstall cuts the block and the blank line install put before
it, and deletes a file that held nothing else. The rest of the file is never touched, and a
file whose markers do not pair up is refused rather than guessed at.

Planning is pure (``plan_install``/``plan_uninstall`` return ``FileChange``s, an ``after`` of
``""`` meaning "delete"); ``settings_backup.apply_changes`` backs a file up (in the data dir)
before changing or deleting it.
"""

from __future__ import annotations

import re
from pathlib import Path

from ai_memory.client.agent_settings import FileChange
from ai_memory.core.errors import ConfigError
from ai_memory.core.guidance import RULES_BEGIN, RULES_END

# AGENTS.md is read by Codex, Cursor, Copilot CLI and OpenCode alike: one block serves them all.
RULE_FILES = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "gemini": "GEMINI.md", "qwen": "QWEN.md",
              "cursor": "AGENTS.md", "copilot": "AGENTS.md", "opencode": "AGENTS.md", "cline": ".clinerules/ai-memory.md"}

# Match on the marker's stable prefix: a later version may reword the text after "begin".
_BEGIN_PREFIX = RULES_BEGIN[: RULES_BEGIN.index(":begin") + len(":begin")]
_BEGIN_LINE = re.compile(rf"^{re.escape(_BEGIN_PREFIX)}\b[^\n]*$", re.M)
_END_LINE = re.compile(rf"^{re.escape(RULES_END)}[ \t]*\r?$", re.M)
_BLOCK = re.compile(
    rf"^{re.escape(_BEGIN_PREFIX)}\b[^\n]*\n.*?^{re.escape(RULES_END)}[ \t]*(?:\r?\n|\Z)", re.S | re.M)


def project_root(cwd: Path) -> Path:
    """The git repository's root holding ``cwd`` (a worktree's own root), else ``cwd`` itself."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


def rules_path(agent: str, directory: Path) -> Path:
    if agent not in RULE_FILES:
        raise ConfigError(f"unknown agent {agent!r}", detail=f"choose {', '.join(RULE_FILES)}")
    if agent == "cline" and (directory / ".clinerules").is_file():
        return directory / ".clinerules"  # the one-file form Cline also reads
    return directory / RULE_FILES[agent]


def read_text(path: Path) -> str | None:
    """The file's exact text (line endings kept), or None when it does not exist."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}", detail=str(exc)) from exc


def _blocks(text: str, path: Path) -> list[re.Match[str]]:
    """Our blocks in ``text``; a begin without its end (or the reverse) is an error to fix by hand."""
    found = list(_BLOCK.finditer(text))
    begins, ends = len(_BEGIN_LINE.findall(text)), len(_END_LINE.findall(text))
    if not begins == ends == len(found):
        raise ConfigError(f"{path} has an unpaired ai-memory marker",
                          detail=f"fix or remove the lines starting {_BEGIN_PREFIX!r} / {RULES_END!r} by hand")
    return found


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def with_rules(text: str | None, block: str, path: Path) -> str:
    """``text`` with exactly one rules block: the first one replaced, any others cut."""
    if not text:
        return block
    nl = _newline(text)
    block = block.replace("\n", nl)
    found = _blocks(text, path)
    if not found:
        return text + ("" if text.endswith(nl) else nl) + nl + block
    out = text[:found[0].start()] + block + text[found[0].end():]
    for match in reversed(_blocks(out, path)[1:]):
        out = _cut(out, match.start(), match.end(), nl)
    return out


def without_rules(text: str, path: Path) -> str:
    """``text`` with every rules block cut, and the blank line that set each one apart."""
    nl = _newline(text)
    for match in reversed(_blocks(text, path)):
        text = _cut(text, match.start(), match.end(), nl)
    return text


def _cut(text: str, start: int, end: int, nl: str) -> str:
    before, after = text[:start], text[end:]
    if not after:  # at the end: drop the blank line install added before the block
        return before[: -len(nl)] if before.endswith(nl + nl) else before
    if (not before or before.endswith(nl + nl)) and after.startswith(nl):
        after = after[len(nl):]  # between paragraphs: keep one blank line, not two
    return before + after


def plan_install(path: Path, block: str) -> FileChange:
    before = read_text(path)
    return FileChange(path, before, with_rules(before, block, path))


def plan_uninstall(path: Path) -> FileChange:
    before = read_text(path)
    if before is None:
        return FileChange(path, None, None)
    return FileChange(path, before, without_rules(before, path))
