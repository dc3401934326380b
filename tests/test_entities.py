"""Entities are found by rules: paths, symbols, references, packages, identifiers, names."""

from __future__ import annotations

import time

import pytest

from ai_memory.core.entities import extract_entities, normalize_entity

TABLE = [
    # file paths, kept as written, trailing punctuation stripped
    ("Raise the TTL in app/auth.py.", ["app/auth.py"]),
    ("see /home/dev/x/y.ts, then docs/adr/0007-token-ttl.md;", ["/home/dev/x/y.ts", "docs/adr/0007-token-ttl.md"]),
    ("at app/auth.py:12 and (README.md) and ~/notes/todo.txt", ["app/auth.py", "README.md", "~/notes/todo.txt"]),
    ("run ./scripts/run.sh in src/components/ or .github/workflows/ci.yml",
     ["./scripts/run.sh", "src/components/", ".github/workflows/ci.yml"]),
    ("review db/0042_add_index.sql", ["db/0042_add_index.sql"]),
    ("and/or Postgres/MySQL I/O 1/2", ["MySQL"]),
    # symbols in backticks
    ("set `TOKEN_TTL` to 900 and call `refresh()`", ["TOKEN_TTL", "refresh"]),
    ("use `--force` or `42` then `$HOME`", ["$HOME"]),
    # code identifiers: snake_case, CamelCase, dotted names
    ("the session_observations helper returns SessionPage", ["session_observations", "SessionPage"]),
    ("the module ai_memory.core.events and os.path, HTTPServer, iPhone", ["ai_memory.core.events", "os.path",
                                                                           "HTTPServer", "iPhone"]),
    ("e.g. the APIs, PRs, TODO and CI are not code", []),
    # capitalised proper names, not at sentence start, stopwords skipped
    ("I met Caroline in New York last June.", ["Caroline", "New York", "June"]),
    ("Postgres is slow. We moved to Postgres anyway.", ["Postgres"]),
    ("Raise the limit. Let Melanie know. This is fine. We saw The Beatles.", ["Melanie", "Beatles"]),
    ("Caroline's dog is called Rex.", ["Caroline", "Rex"]),
    # an interjection before a name is not part of it (chat: "Wow Jon", "Bye Joanna")
    ("Yeah John, sure. Bye Joanna! Wow Jon, same here. Congrats Mel.", ["John", "Joanna", "Jon", "Mel"]),
    ("pip install yay, then ask Oh Sehun", ["yay", "Oh Sehun"]),
    # issue and PR references
    ("fixes #123, GH-45, acme/api#12 and PROJ-123", ["#123", "GH-45", "acme/api#12", "PROJ-123"]),
    ("UTF-8 and SHA-256 are not tickets; &#123; is not an issue", []),
    # packages
    ("pip install requests==2.31 flask[async] -r requirements.txt", ["requests", "flask"]),
    ("npm install @scope/pkg@1.2.0 lodash && cargo add serde", ["@scope/pkg", "lodash", "serde"]),
    ("go get github.com/pkg/errors@v0.9.1", ["github.com/pkg/errors"]),
    ("import numpy\nfrom ai_memory.core import events\nfrom __future__ import annotations",
     ["numpy", "ai_memory.core"]),
    ("pip install httpx and then run the tests", ["httpx"]),
    # links are not entities
    ("see https://github.com/acme/api/pull/12 for details", []),
]


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_entity_table(text: str, expected: list[str]) -> None:
    assert extract_entities(text) == expected


def test_first_appearance_order_and_case_insensitive_dedup() -> None:
    text = "`TOKEN_TTL` lives in app/auth.py; token_ttl is read by app/session.py and again TOKEN_TTL."
    assert extract_entities(text) == ["TOKEN_TTL", "app/auth.py", "app/session.py"]


def test_limit_keeps_the_first_ones() -> None:
    text = " ".join(f"mod_{i}" for i in range(100))
    assert extract_entities(text, limit=3) == ["mod_0", "mod_1", "mod_2"]
    assert len(extract_entities(text)) == 50


def test_normalize_entity_is_the_matching_key() -> None:
    assert normalize_entity("  App/Auth.py ") == "app/auth.py"
    assert normalize_entity("New York") == normalize_entity("new york")


def test_not_text_gives_nothing() -> None:
    assert extract_entities(None) == []  # type: ignore[arg-type]
    assert extract_entities("") == []


@pytest.mark.parametrize("text", [
    "a" * 200_000, "-".join(["abc"] * 50_000), "a/" * 100_000 + "a", "a." * 100_000 + "1",
    "_" * 200_000, "`" * 200_000, "#1" * 100_000, "Foo Bar " * 25_000, "/x" * 100_000, "@a" * 100_000,
])
def test_hostile_text_stays_linear(text: str) -> None:
    started = time.perf_counter()
    found = extract_entities(text)
    assert time.perf_counter() - started < 3
    assert all(len(e) <= 256 for e in found)
