"""Reading request bodies within what their route can use, with a clear 4xx for every way a
body can be wrong.

Each route names its ``BodyLimit`` (``core.body_limits``): the bytes it may send, and the JSON
tokens those bytes may hold. A declared length over the limit is refused (413) before a byte is
read; the tokens are counted before anything is parsed (413: 9.9 MB of ``[],`` once grew the
daemon by 570 MB). A body larger than ``INLINE_BYTES`` (or of unknown
length) waits for one of ``LARGE_AT_ONCE`` slots before it is read, and is counted and parsed in
a thread of its own: at most that many large bodies are in memory at once, and the event loop
keeps answering meanwhile (the token bound is what keeps each parse short: CPython's parser holds
the GIL while it runs).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aiohttp import web
from multidict import MultiDictProxy

from ai_memory.core.body_limits import BATCH, EVENT, SMALL, WRITE, BodyLimit, json_tokens
from ai_memory.core.errors import InputError, PayloadTooLarge, UnsupportedMedia
from ai_memory.core.wire import route_param

__all__ = ["BATCH", "BODIES", "EVENT", "SMALL", "WRITE", "BodyLimit", "BodyReader", "read_form", "read_json"]


FORM_BYTES = 16 << 10  # a web-view form: a path, a signal, a CSRF token
INLINE_BYTES = 64 << 10  # read and parsed on the event loop up to this size
LARGE_AT_ONCE = 2  # large bodies read and parsed at once; the others wait, unread
SLOW_BODY_S = 30.0  # a large body holding a slot must have arrived by then


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def check_tokens(raw: bytes | bytearray, limit: BodyLimit) -> None:
    """PayloadTooLarge once ``raw`` holds more than ``limit.max_tokens`` tokens; stops counting there."""
    if json_tokens(raw, limit.max_tokens) > limit.max_tokens:
        raise PayloadTooLarge("too many JSON values",
                              detail=f"{limit.what} holds at most {limit.max_tokens} strings, arrays, objects and commas")


def parse_json(raw: bytes | bytearray, limit: BodyLimit) -> Any:
    """The parsed body: 400 when empty, malformed or not UTF-8, 413 when it holds too many tokens."""
    if not raw or raw.isspace():
        raise InputError("empty body", detail="send a JSON object")
    check_tokens(raw, limit)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("body is not UTF-8", detail=str(exc)) from exc
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise InputError("malformed JSON", detail="nesting too deep") from exc
    except ValueError as exc:
        raise InputError("malformed JSON", detail=str(exc)[:300]) from exc


def _too_large(limit: BodyLimit, most: int) -> PayloadTooLarge:
    return PayloadTooLarge("body too large", detail=f"{limit.what} is at most {most} bytes")


class BodyReader:
    """The app's reader of bodies: the slots for large ones, and the thread that parses them."""

    def __init__(self, ceiling: int, at_once: int = LARGE_AT_ONCE) -> None:
        self.ceiling = ceiling  # server.max_body_bytes: no route reads more, whatever its limit
        self._slots = asyncio.Semaphore(at_once)
        self._thread: ThreadPoolExecutor | None = None

    async def context(self, app: web.Application) -> AsyncIterator[None]:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ai-memory-body")
        yield
        self._thread.shutdown(wait=True, cancel_futures=True)

    async def json(self, request: web.Request, limit: BodyLimit) -> Any:
        """The route's JSON body. 415 for another content type, 413 past the limit, 400 when malformed."""
        ctype = request.content_type
        if request.headers.get("Content-Type") and not (ctype == "application/json" or ctype.endswith("+json")):
            raise UnsupportedMedia("body must be JSON", detail=f"Content-Type {ctype!r} is not application/json")
        return await self._read(request, limit, parse_json)

    async def raw(self, request: web.Request, limit: BodyLimit) -> bytes:
        """The route's body as bytes, its tokens counted (a JSON body another library parses)."""
        def counted(raw: bytearray, limit: BodyLimit) -> bytes:
            check_tokens(raw, limit)
            return bytes(raw)
        return await self._read(request, limit, counted)

    async def _read(self, request: web.Request, limit: BodyLimit, then: Any) -> Any:
        most = min(limit.max_bytes, self.ceiling)
        declared = request.content_length
        if declared is not None and declared > most:
            raise _too_large(limit, most)
        if declared is not None and declared <= INLINE_BYTES:
            return then(await _take(request, limit, most), limit)
        async with self._slots:
            try:
                async with asyncio.timeout(SLOW_BODY_S):
                    raw = await _take(request, limit, most)
            except TimeoutError:
                raise InputError("body too slow", detail=f"a large body must arrive within {SLOW_BODY_S:.0f} s") from None
            return await asyncio.get_running_loop().run_in_executor(self._thread, then, raw, limit)


BODIES = web.AppKey("bodies", BodyReader)


async def read_json(request: web.Request, limit: BodyLimit) -> Any:
    """The request's JSON body, read within ``limit`` (see ``BodyReader.json``)."""
    return await request.app[BODIES].json(request, limit)


async def _take(request: web.Request, limit: BodyLimit, most: int) -> bytearray:
    body = bytearray()
    async for chunk in request.content.iter_any():
        body += chunk
        if len(body) > most:
            raise _too_large(limit, most)
    return body


async def read_form(request: web.Request) -> MultiDictProxy[Any]:
    """A web-view form (urlencoded or multipart), refused (413) unless its declared length is small."""
    if request.content_length is None or request.content_length > FORM_BYTES:
        raise PayloadTooLarge("form too large", detail=f"a form is at most {FORM_BYTES} bytes, with its length declared")
    return await request.post()


def query_limit(request: web.Request) -> int:
    """``?limit=``: an integer from 1 to the largest the route declares (``core.wire``), its
    default if absent; InputError otherwise."""
    resource = request.match_info.route.resource
    declared = route_param(request.method, resource.canonical if resource else request.path, "limit")
    maximum, default = declared.maximum or 1, declared.default or 1
    try:
        limit = int(request.query.get("limit", str(default)))
    except ValueError:
        raise InputError("limit must be an integer") from None
    if not 1 <= limit <= maximum:
        raise InputError(f"limit must be from 1 to {maximum}")
    return limit
