"""Claude Code transcripts (the JSONL files ``transcript_path`` points to) as hook payloads.

Each transcript line is one message. User text becomes a UserPromptSubmit, an assistant
tool call a PreToolUse, its result a PostToolUse, and assistant text a Stop carrying
``last_assistant_message``. Every payload keeps the line's original timestamp and an
idempotency key derived from the line's uuid, so importing twice adds nothing. A line that
cannot be read (nested deeper than the JSON parser goes, or failing in any other way) costs
only itself: it is counted as unreadable, with its line number, and the import goes on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

MAX_PROBLEMS = 10  # unreadable lines named one by one; the rest are only counted


@dataclass
class ImportCounts:
    lines: int = 0
    events: int = 0
    malformed: int = 0
    skipped: int = 0
    unreadable: int = 0
    problems: list[str] = field(default_factory=list)  # the first few unreadable lines, by number
    tool_names: dict[str, str] = field(default_factory=dict)

    def unreadable_line(self, number: int, reason: str) -> None:
        self.unreadable += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"line {number}: {reason}")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _base(line: dict[str, Any], key: str, event: str) -> dict[str, Any]:
    payload = {
        "session_id": line.get("sessionId") or line.get("session_id"),
        "cwd": line.get("cwd"),
        "hook_event_name": event,
        "idempotency_key": f"claude-import-{key}",
        "source": "transcript-import",
    }
    if line.get("timestamp"):
        payload["timestamp"] = line["timestamp"]
    return payload


def payloads_from_line(line: dict[str, Any], counts: ImportCounts, line_key: str) -> Iterator[dict[str, Any]]:
    """The hook payloads one transcript line stands for (none for summaries and metadata)."""
    message = line.get("message")
    kind = line.get("type")
    if kind not in ("user", "assistant") or not isinstance(message, dict) or not (line.get("sessionId") or line.get("session_id")):
        counts.skipped += 1
        return
    key = str(line.get("uuid") or line_key)
    for i, block in enumerate(_blocks(message.get("content"))):
        sub = f"{key}-{i}"
        btype = block.get("type")
        if btype == "text" and kind == "user" and str(block.get("text", "")).strip():
            yield {**_base(line, sub, "UserPromptSubmit"), "prompt": block["text"]}
        elif btype == "text" and kind == "assistant" and str(block.get("text", "")).strip():
            yield {**_base(line, sub, "Stop"), "last_assistant_message": block["text"]}
        elif btype == "tool_use":
            name = str(block.get("name") or "tool")
            counts.tool_names[str(block.get("id"))] = name
            yield {**_base(line, sub, "PreToolUse"), "tool_name": name, "tool_input": block.get("input"),
                   "tool_use_id": block.get("id")}
        elif btype == "tool_result":
            name = counts.tool_names.get(str(block.get("tool_use_id")), "tool")
            event = "PostToolUseFailure" if block.get("is_error") else "PostToolUse"
            yield {**_base(line, sub, event), "tool_name": name, "tool_use_id": block.get("tool_use_id"),
                   "tool_response": block.get("content")}


def parse_transcript(lines: Iterator[bytes], counts: ImportCounts) -> Iterator[dict[str, Any]]:
    """Payloads for every well-formed line; malformed and unreadable lines are counted and skipped."""
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        counts.lines += 1
        try:
            line = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            counts.malformed += 1
            continue
        except RecursionError:  # a value nested deeper than the parser goes: this line only
            counts.unreadable_line(number, "nested too deeply to read")
            continue
        if not isinstance(line, dict):
            counts.malformed += 1
            continue
        line_key = hashlib.sha256(raw.strip()).hexdigest()[:32]
        try:  # whole or not at all: a line that fails midway sends none of its payloads
            payloads = list(payloads_from_line(line, counts, line_key))
        except Exception as exc:  # any other failure of one line is that line's, never the import's
            counts.unreadable_line(number, f"{type(exc).__name__}: {str(exc)[:200]}")
            continue
        for payload in payloads:
            counts.events += 1
            yield payload
