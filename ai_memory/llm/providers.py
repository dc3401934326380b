"""The two wire formats: OpenAI-compatible chat completions and the Anthropic Messages API.

A provider sends one system and one user message and returns the model's text; everything
that goes wrong (refused, unreachable, a status other than 200, a body that is not the
format's JSON, no answer in time) is an ``LlmError``, never a raw aiohttp or JSON error.
Answers are read up to ``MAX_ANSWER_BYTES``: a hostile or broken endpoint cannot fill memory.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from ai_memory.core.errors import LlmError, ProviderTimeout
from ai_memory.llm.settings import LlmSettings

MAX_ANSWER_BYTES = 1024 * 1024
ANTHROPIC_VERSION = "2023-06-01"


class Provider(Protocol):
    """What the worker and the reranker need of a model."""

    @property
    def model(self) -> str: ...

    async def complete(self, system: str, user: str, timeout_s: float | None = None) -> str: ...

    async def check(self) -> None: ...

    async def close(self) -> None: ...


@dataclass
class _Http:
    """One client session per provider, opened on first use (inside the event loop)."""

    settings: LlmSettings
    _session: aiohttp.ClientSession | None = None

    @property
    def model(self) -> str:
        return self.settings.model

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def _call(self, method: str, url: str, headers: dict[str, str], body: Any | None,
                    timeout_s: float) -> Any:
        """The JSON of a 200 answer; any other outcome is an LlmError saying which."""
        try:
            async with asyncio.timeout(timeout_s):
                async with self._client().request(method, url, headers=headers, json=body) as resp:
                    data = await resp.content.read(MAX_ANSWER_BYTES + 1)
                    status = resp.status
        except TimeoutError as exc:
            raise ProviderTimeout("the LLM provider did not answer in time",
                                  detail=f"{url}: more than {timeout_s:g} s") from exc
        except aiohttp.ClientError as exc:
            raise LlmError("the LLM provider cannot be reached", detail=f"{url}: {exc}") from exc
        if len(data) > MAX_ANSWER_BYTES:
            raise LlmError("the LLM provider's answer is too large", detail=f"more than {MAX_ANSWER_BYTES} bytes")
        if status != 200:
            raise LlmError(f"the LLM provider answered {status}", detail=_error_text(data))
        try:
            return json.loads(data)
        except ValueError as exc:
            raise LlmError("the LLM provider's answer is not JSON", detail=data[:200].decode("utf-8", "replace")) from exc


class OpenAIChat(_Http):
    """``POST {base_url}/chat/completions``: OpenAI, and local servers speaking its format
    (Ollama, llama.cpp's server, vLLM); ``base_url`` ends in ``/v1`` as theirs do."""

    def _headers(self) -> dict[str, str]:
        key = self.settings.api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def complete(self, system: str, user: str, timeout_s: float | None = None) -> str:
        body = {"model": self.model, "max_tokens": self.settings.max_tokens, "temperature": 0,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}
        found = await self._call("POST", f"{self.settings.base_url}/chat/completions", self._headers(), body,
                                 timeout_s or self.settings.timeout_s)
        try:
            content = found["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise LlmError("the chat answer has no choices[0].message.content", detail=_shape(found)) from exc
        if not isinstance(content, str):
            raise LlmError("the chat answer's content is not text", detail=_shape(found))
        return content

    async def check(self) -> None:
        """``GET /models``: proves the endpoint and the key without spending a token."""
        await self._call("GET", f"{self.settings.base_url}/models", self._headers(), None, self.settings.timeout_s)


class AnthropicMessages(_Http):
    """``POST {base_url}/v1/messages`` with ``x-api-key`` and ``anthropic-version``."""

    def _headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if self.settings.api_key:
            headers["x-api-key"] = self.settings.api_key
        return headers

    async def complete(self, system: str, user: str, timeout_s: float | None = None) -> str:
        body = {"model": self.model, "max_tokens": self.settings.max_tokens, "temperature": 0,
                "system": system, "messages": [{"role": "user", "content": user}]}
        found = await self._call("POST", f"{self.settings.base_url}/v1/messages", self._headers(), body,
                                 timeout_s or self.settings.timeout_s)
        blocks = found.get("content") if isinstance(found, dict) else None
        if not isinstance(blocks, list):
            raise LlmError("the messages answer has no content blocks", detail=_shape(found))
        texts = [b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                 and isinstance(b.get("text"), str)]
        if not texts:
            raise LlmError("the messages answer has no text block", detail=_shape(found))
        return "".join(texts)

    async def check(self) -> None:
        """``GET /v1/models``: proves the endpoint and the key without spending a token."""
        await self._call("GET", f"{self.settings.base_url}/v1/models", self._headers(), None, self.settings.timeout_s)


def make_provider(settings: LlmSettings) -> Provider:
    return OpenAIChat(settings) if settings.provider == "openai" else AnthropicMessages(settings)


def _error_text(data: bytes) -> str:
    """The provider's own error message when it sent one (both formats use ``error.message``)."""
    try:
        found = json.loads(data)
        message = found["error"]["message"] if isinstance(found.get("error"), dict) else found.get("error")
        if isinstance(message, str):
            return message[:300]
    except (ValueError, AttributeError, KeyError, TypeError):
        pass
    return data[:300].decode("utf-8", "replace")


def _shape(found: Any) -> str:
    return f"top-level keys: {sorted(found)[:10]}" if isinstance(found, dict) else type(found).__name__
