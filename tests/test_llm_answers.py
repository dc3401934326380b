"""A model's text becomes data only as JSON its schema accepts; [llm] settings are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai_memory.config import load_config
from ai_memory.core.errors import ConfigError, MalformedOutput
from ai_memory.llm.answers import CONSOLIDATION_SCHEMA, parse_answer, rerank_schema
from ai_memory.llm.settings import llm_settings

GOOD = {"summary": "Did things.", "memories": [{"kind": "gotcha", "title": "t", "text": "x"}]}


def test_json_alone_or_in_one_fence_is_accepted() -> None:
    assert parse_answer(json.dumps(GOOD), CONSOLIDATION_SCHEMA) == GOOD
    assert parse_answer(f"```json\n{json.dumps(GOOD)}\n```", CONSOLIDATION_SCHEMA) == GOOD


@pytest.mark.parametrize("text", [
    "Here you go: " + json.dumps(GOOD),
    json.dumps(GOOD) + "\nHope this helps!",
    json.dumps({**GOOD, "shell": "rm -rf /"}),
    json.dumps({"summary": "x", "memories": [{"kind": "secret", "title": "t", "text": "x"}]}),
    json.dumps({"summary": "x" * 9000, "memories": []}),
    json.dumps({"summary": "x", "memories": [{"kind": "gotcha", "title": "t", "text": "x"}] * 13}),
    json.dumps([GOOD]),
    "",
], ids=["prose-before", "prose-after", "extra-key", "unknown-kind", "summary-too-long", "too-many", "array", "empty"])
def test_anything_else_is_malformed(text: str) -> None:
    with pytest.raises(MalformedOutput):
        parse_answer(text, CONSOLIDATION_SCHEMA)


def test_a_rerank_names_only_numbers_it_was_given() -> None:
    assert parse_answer('{"order": [3, 1]}', rerank_schema(3)) == {"order": [3, 1]}
    for bad in ('{"order": [4]}', '{"order": [0]}', '{"order": [1, 1]}', '{"order": ["1"]}'):
        with pytest.raises(MalformedOutput):
            parse_answer(bad, rerank_schema(3))


def _settings(tmp_path: Path, toml: str, environ: dict[str, str] | None = None):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.toml").write_text(toml)
    return llm_settings(load_config(tmp_path, environ=environ or {}))


def test_unset_is_off_and_the_key_comes_from_a_file_or_the_named_variable(tmp_path: Path) -> None:
    assert _settings(tmp_path, "") is None
    (tmp_path / "k").write_text("sk-file\n")
    from_file = _settings(tmp_path, '[llm]\nprovider = "anthropic"\nmodel = "m"\napi_key_file = "k"\n'
                                    'api_key_env = "KEY"\n', {"KEY": "sk-env"})
    assert from_file.api_key == "sk-file" and from_file.base_url == "https://api.anthropic.com"
    assert "sk-file" not in repr(from_file)
    from_env = _settings(tmp_path, '[llm]\nprovider = "openai"\nmodel = "m"\napi_key_env = "KEY"\n', {"KEY": "sk-env"})
    assert from_env.api_key == "sk-env" and from_env.base_url == "https://api.openai.com/v1"
    assert "sk-env" not in repr(load_config(tmp_path, environ={"KEY": "sk-env"}))


@pytest.mark.parametrize("toml, message", [
    ('provider = "gpt"\nmodel = "m"', "unknown llm.provider"),
    ('provider = "openai"', "llm.model is required"),
    ('provider = "openai"\nmodel = "m"\napi_key_env = "NOPE"', "llm.api_key_env names NOPE"),
    ('provider = "openai"\nmodel = "m"\nbase_url = "file:///etc"', "must be an http"),
    ('provider = "openai"\nmodel = "m"\ntimeout_s = 0', "llm.timeout_s must be greater than 0"),
])
def test_bad_settings_say_what_is_wrong(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _settings(tmp_path, f"[llm]\n{toml}\n")
