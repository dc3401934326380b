"""data_template/config.toml lists every key with its default, and nothing else."""

from __future__ import annotations

from pathlib import Path

from ai_memory.config import KEYS, render_template

TEMPLATE = Path(__file__).resolve().parent.parent / "data_template" / "config.toml"


def test_template_is_generated_from_the_key_table() -> None:
    assert TEMPLATE.read_text() == render_template(), "run: python -c 'from ai_memory.config import render_template; print(render_template(), end=\"\")' > data_template/config.toml"


def test_every_key_is_in_the_template() -> None:
    text = TEMPLATE.read_text()
    for key in KEYS:
        assert f"# {key.name} = " in text
