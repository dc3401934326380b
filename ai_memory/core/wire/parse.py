"""A body checked against its type: a 400 naming the first field that is wrong, in the words
the daemon's other refusals use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from ai_memory.core.errors import InputError
from ai_memory.core.memory import PROJECT_RULE

T = TypeVar("T")

__all__ = ["adapter", "page_ref", "parse"]


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}  # a validator is built once per type, when first used


def adapter(kind: type[T]) -> TypeAdapter[T]:
    found = _ADAPTERS.get(kind)
    if found is None:
        found = _ADAPTERS[kind] = TypeAdapter(kind)
    return found


def parse(kind: type[T], value: object) -> T:
    """``value`` as ``kind``, or an InputError naming the first field that is wrong."""
    if not isinstance(value, dict):
        raise InputError("body must be a JSON object", detail=f"{kind.__name__}: {(kind.__doc__ or '').strip()}")
    try:
        return adapter(kind).validate_python(value)
    except ValidationError as exc:
        raise _input_error(exc) from None


def page_ref(values: Mapping[str, object]) -> str:
    """The page a body or a query names: its ``path``, else its ``id`` (a memory id)."""
    ref = values.get("path") or values.get("id")
    if not isinstance(ref, str) or not ref.strip():
        raise InputError("missing path or id", detail="path=<project>/<family>/<page>.md or id=<memory id>")
    return ref


def _input_error(exc: ValidationError) -> InputError:
    errors = exc.errors(include_url=False)
    # a string outside an enum says "unknown" (one error per branch of a union: that one is the reason)
    first = next((e for e in errors if e["type"] == "literal_error" and isinstance(e.get("input"), str)), errors[0])
    where = ".".join(str(part) for part in first["loc"] if isinstance(part, int) or "[" not in str(part))
    if first["type"] == "missing":
        return InputError(f"missing {where}")
    if first["type"] == "string_pattern_mismatch":  # the one pattern is a project's name
        return InputError(f"bad {where} name", detail=PROJECT_RULE)
    if first["type"] == "literal_error":
        where = ".".join(str(part) for part in first["loc"] if isinstance(part, str) and "[" not in part)
        given = str(first.get("input"))[:40]
        return InputError(f"unknown {where} {given!r}", detail="one of " + str(first.get("ctx", {}).get("expected")))
    return InputError(_said(where, first["type"], first.get("ctx") or {}) or f"{where}: {first['msg']}")


_MUST_BE = {"int_type": "an integer", "int_from_float": "an integer", "bool_type": "true or false",
            "string_type": "a string", "float_type": "a number", "list_type": "a list", "dict_type": "an object",
            "typed_dict_type": "an object"}


def _said(where: str, kind: str, ctx: dict[str, Any]) -> str | None:
    """The reason in the words the daemon's other refusals use, where one is known."""
    if kind in _MUST_BE:
        return f"{where} must be {_MUST_BE[kind]}"
    if kind in ("greater_than_equal", "less_than_equal"):
        bound = ctx.get("ge", ctx.get("le"))
        return f"{where} must be at {'least' if kind == 'greater_than_equal' else 'most'} {bound}"
    if kind == "string_too_long":
        return f"{where} must be at most {ctx.get('max_length')} characters"
    if kind == "string_too_short":
        return f"{where} must not be empty"
    if kind == "too_long":
        return f"too many {where}: at most {ctx.get('max_length')}"
    return None
