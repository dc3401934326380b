"""The lines of a search hit that answer: its evidence, the turns the hit was found by (the
question, the reply, the edit), each with what it was. ``ai-memory search`` and the web view
both show these, so a session hit reads as what was said rather than as the tool calls its
passage also holds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_memory.core.recall import edit_parts_said, turn_said

SHOWN = 2  # evidence lines a hit shows


def answer_lines(hit: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The hit's first ``SHOWN`` evidence turns, each with ``said`` (asked, replied, changed
    <file>, failed, or "") beside its ``snippet`` and ``highlights``, an edit's parts said in a
    word (``new:``, as prompt recall says them); [] for a written page."""
    return [_said(ev) for ev in (hit.get("evidence") or [])[:SHOWN] if ev.get("snippet")]


def _said(evidence: Mapping[str, Any]) -> dict[str, Any]:
    snippet, highlights = edit_parts_said(str(evidence["snippet"]), evidence.get("highlights") or [])
    return {**evidence, "snippet": snippet, "highlights": highlights, "said": turn_said(evidence)}
