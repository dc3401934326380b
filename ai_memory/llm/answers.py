"""The only way a model's text becomes data: JSON, validated against the schema it was asked for.

A reply may be the JSON object alone or that object in one fenced block (models add the
fence unasked); anything else, and any object the schema refuses, is a MalformedOutput.
The schemas bound every string and list, so a validated answer is also a bounded one.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from ai_memory.core.errors import MalformedOutput

MEMORY_KINDS = ("decision", "gotcha", "procedure", "concept")
MAX_MEMORIES = 12
MAX_REPLY_CHARS = 200_000

CONSOLIDATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "memories"],
    "properties": {
        "summary": {"type": "string", "minLength": 1, "maxLength": 8000},
        "memories": {
            "type": "array",
            "maxItems": MAX_MEMORIES,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["kind", "title", "text"],
                "properties": {
                    "kind": {"enum": list(MEMORY_KINDS)},
                    "title": {"type": "string", "minLength": 1, "maxLength": 120},
                    "text": {"type": "string", "minLength": 1, "maxLength": 4000},
                    "tags": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 40}},
                },
            },
        },
    },
}


def rerank_schema(candidates: int) -> dict[str, Any]:
    """``{"order": [candidate numbers, best first]}``: each a number the prompt listed."""
    return {
        "type": "object",
        "required": ["order"],
        "properties": {"order": {"type": "array", "maxItems": candidates, "uniqueItems": True,
                                 "items": {"type": "integer", "minimum": 1, "maximum": candidates}}},
    }


_FENCED = re.compile(r"\A```[a-zA-Z]*[ \t]*\r?\n(.*?)\r?\n?```\Z", re.S)


def parse_answer(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The validated object, or MalformedOutput naming the first problem."""
    if len(text) > MAX_REPLY_CHARS:
        raise MalformedOutput("the model's answer is too long", detail=f"{len(text)} characters")
    body = text.strip()
    fenced = _FENCED.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        found = json.loads(body)
    except ValueError as exc:
        raise MalformedOutput("the model's answer is not JSON", detail=body[:120]) from exc
    error = best_match(Draft202012Validator(schema).iter_errors(found))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise MalformedOutput("the model's answer does not match the schema", detail=f"{where}: {error.message[:200]}")
    return found
