"""What an agent's reply leaves open, by rules: the questions it asks and the next steps it lists
(items under a "Next steps" / "TODO" / "Remaining" label, unchecked boxes, "Next, ..." sentences).
Fenced code is skipped.
"""

from __future__ import annotations

import re

from ai_memory.core.payload_text import clip

__all__ = ["next_steps", "questions", "sentences"]

_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_STEP_LABEL = re.compile(r"^(?:#+\s*)?(?:\*\*|__)?(?:next steps?|todos?|to-dos?|still to do|follow[- ]ups?"
                         r"|remaining(?: work| steps| tasks| items)?)(?:\*\*|__)?\s*(?::|$)(?:\*\*|__)?\s*(.*)$", re.I)
_STEP_SENTENCE = re.compile(r"^(?:next\b(?!\.\w)|todo\s*[:(]|fixme\b|still to do\b|remaining\s*:)", re.I)
_LIST_HEADER = re.compile(r"(?:next steps?|todo|to-do|remain|still to do|left to do|follow[- ]up)[^:]{0,60}:\s*$",
                          re.I)


def sentences(text: str) -> list[str]:
    """The sentences of the text outside code fences, bullets and heading marks removed."""
    out: list[str] = []
    fenced = False
    for raw in text[:20_000].splitlines():
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        line = _BULLET.sub("", raw).strip().lstrip("#").strip()
        if line and not fenced:
            out += [s.strip() for s in _SENTENCE.split(line) if s.strip()]
    return out


def questions(text: str) -> list[str]:
    """The sentences that ask something."""
    return [clip(s, 300) for s in sentences(text) if len(s) > 3 and s.rstrip("*_\"')").endswith("?")]


def next_steps(text: str) -> list[str]:
    """Items under a "Next steps"/"TODO"/"Remaining" label, unchecked boxes, "Next, ..." sentences."""
    steps: list[str] = []
    in_list = fenced = False
    for raw in text[:20_000].splitlines():
        if raw.lstrip().startswith("```"):
            fenced = not fenced
            continue
        bullet = _BULLET.match(raw)
        body = raw[bullet.end():].strip() if bullet else raw.strip()
        if fenced or not body or re.match(r"\s*[-*+]\s+\[[xX]\]", raw):
            continue
        if re.match(r"\s*[-*+]\s+\[ \]", raw) or (bullet and in_list):
            steps.append(body)
        elif label := _STEP_LABEL.match(body):
            steps += [label.group(1)] if label.group(1).strip() else []
            in_list = True
        elif _LIST_HEADER.search(body):
            in_list = True
        else:
            in_list = False
            steps += [s for s in _SENTENCE.split(body) if _STEP_SENTENCE.match(s)]
    return [clip(s.strip(), 300) for s in steps if s.strip()]
