"""The ``[llm]`` settings of one run, resolved from a Config: which provider, where, which key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.errors import ConfigError

PROVIDERS = ("openai", "anthropic")
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
MAX_KEY_BYTES = 4096


@dataclass(frozen=True)
class LlmSettings:
    """Everything a provider and the job worker need; the key is kept out of every repr."""

    provider: str
    base_url: str
    model: str
    timeout_s: float
    max_attempts: int
    backoff_s: float
    lease_s: float
    max_tokens: int
    rerank: bool
    rerank_timeout_s: float
    max_calls_per_session: int = 0  # 0: no cap
    max_calls_per_day: int = 0
    api_key: str | None = field(default=None, repr=False)


def llm_settings(config: Config) -> LlmSettings | None:
    """The settings when ``llm.provider`` is set (None: consolidation is off); a ConfigError
    names what is missing or wrong."""
    llm = config.llm
    provider = llm.provider.strip().lower()
    if not provider:
        return None
    if provider not in PROVIDERS:
        raise ConfigError(f"unknown llm.provider {provider!r}", detail="one of " + ", ".join(PROVIDERS))
    model = llm.model.strip()
    if not model:
        raise ConfigError("llm.model is required when llm.provider is set")
    base_url = llm.base_url.strip().rstrip("/") or DEFAULT_BASE_URL[provider]
    if not base_url.startswith(("http://", "https://")):
        raise ConfigError("llm.base_url must be an http:// or https:// URL", detail=base_url[:80])
    return LlmSettings(
        provider=provider, base_url=base_url, model=model,
        timeout_s=_positive("llm.timeout_s", llm.timeout_s), max_attempts=max(1, llm.max_attempts),
        backoff_s=max(0.0, llm.backoff_s), lease_s=_positive("llm.lease_s", llm.lease_s),
        max_tokens=max(64, llm.max_tokens), rerank=llm.rerank,
        rerank_timeout_s=_positive("llm.rerank_timeout_s", llm.rerank_timeout_s),
        max_calls_per_session=max(0, llm.max_calls_per_session), max_calls_per_day=max(0, llm.max_calls_per_day),
        api_key=_api_key(config),
    )


def _positive(dotted: str, value: float) -> float:
    if value <= 0:
        raise ConfigError(f"{dotted} must be greater than 0", detail=str(value))
    return value


def _api_key(config: Config) -> str | None:
    """From ``llm.api_key_file`` (a path, ``~`` allowed, relative to the data dir), else from the
    variable ``llm.api_key_env`` names, else none (a local server needs no key)."""
    name = config.llm.api_key_file.strip()
    if name:
        path = Path(name).expanduser()
        path = path if path.is_absolute() else config.data_dir / path
        try:
            with path.open("rb") as fh:
                raw = fh.read(MAX_KEY_BYTES + 1)
        except OSError as exc:
            raise ConfigError("cannot read llm.api_key_file", detail=f"{path}: {exc.strerror}") from exc
        if len(raw) > MAX_KEY_BYTES:
            raise ConfigError("llm.api_key_file is too large to be an API key", detail=str(path))
        key = raw.decode("utf-8", "replace").strip()
        if not key:
            raise ConfigError("llm.api_key_file is empty", detail=str(path))
        return key
    env_name = config.llm.api_key_env.strip()
    if env_name and not (config.llm_env_key or "").strip():
        raise ConfigError(f"llm.api_key_env names {env_name}, which is not set")
    return (config.llm_env_key or "").strip() or None
