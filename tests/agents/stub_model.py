"""A scripted model endpoint for the real agent CLIs: standard library only, on loopback.

It speaks just enough of four wire APIs for a CLI to run a session end to end:

- Anthropic Messages (``POST /v1/messages``, streamed as server-sent events or not), what
  Claude Code calls with ``ANTHROPIC_BASE_URL``;
- OpenAI Responses (``POST /v1/responses``, streamed), what Codex calls through a custom
  ``model_providers`` entry;
- Gemini ``generateContent`` and ``streamGenerateContent`` (``POST /v1beta/models/M:...``),
  what Gemini CLI calls with ``GOOGLE_GEMINI_BASE_URL``;
- OpenAI Chat Completions (``POST /v1/chat/completions`` or ``/chat/completions``, streamed as
  ``data:`` chunks ending in ``data: [DONE]``, or not), what Qwen Code (``OPENAI_BASE_URL``) and
  Cline (an ``openai-compatible`` provider) call.

Each answer follows a ``Script``: the n-th step of a conversation is chosen by how many tool
results the request already carries (``tool_result`` blocks, ``*_call_output`` items,
``functionResponse`` parts, ``role: "tool"`` messages), so a step is a function of the
conversation and not of request order (CLIs also send side requests: titles, routing, token
counts). A step is a tool call (the CLI runs the tool and sends its result back) or the closing
text. Every request is logged whole (path, headers, JSON body) for the tests to read: which
tools were offered, what the system prompt said, what a tool returned.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    """A tool call the model makes: the tool's name as the CLI offered it, and its arguments."""

    tool: str
    args: dict[str, Any]


@dataclass
class Script:
    """The model's side of one session: its tool calls in order, then ``reply``.

    ``tools`` maps a logical name ("shell", "memory_query") to a function of the offered tool
    names returning the real one, so one script serves every CLI. ``on_step`` runs before a
    step is answered (a test stops the daemon mid-session there)."""

    calls: list[Call] = field(default_factory=list)
    reply: str = "Done."
    on_step: Callable[[int], None] | None = None


@dataclass
class Logged:
    at: float
    path: str
    headers: dict[str, str]
    body: Any
    main: bool  # a turn of the scripted conversation (not a side request)

    @property
    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False)


class StubModel:
    """The server; ``start()`` binds a free loopback port, ``url`` is its base."""

    def __init__(self) -> None:
        self.script = Script()
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        self._steps_done: set[tuple[str, int]] = set()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                stub._answer_get(self)

            def do_HEAD(self) -> None:
                self._plain(200, b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                stub._answer_post(self, body)

            def _plain(self, status: int, data: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # ---- lifecycle ----------------------------------------------------------------------

    def start(self) -> "StubModel":
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def run(self, script: Script) -> None:
        """Use ``script`` for the next session and start a fresh log."""
        with self._lock:
            self.script = script
            self.log = []
            self._steps_done = set()

    def main_requests(self) -> list[Logged]:
        with self._lock:
            return [r for r in self.log if r.main]

    def all_text(self) -> str:
        with self._lock:
            return "\n".join(r.text for r in self.log)

    # ---- dispatch -----------------------------------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: Any, main: bool) -> None:
        with self._lock:
            self.log.append(Logged(time.time(), handler.path, dict(handler.headers.items()), body, main))

    def _answer_get(self, handler: Any) -> None:
        self._record(handler, None, False)
        if "/models" in handler.path:
            handler._plain(200, json.dumps({"data": [], "models": []}).encode())
        else:
            handler._plain(404, b'{"error": "not found"}')

    def _answer_post(self, handler: Any, body: Any) -> None:
        path = handler.path.split("?")[0]
        body = body if isinstance(body, dict) else {}
        if path.endswith("/messages/count_tokens"):
            self._record(handler, body, False)
            handler._plain(200, b'{"input_tokens": 100}')
        elif path.endswith("/messages"):
            self._anthropic(handler, body)
        elif path.endswith("/responses"):
            self._openai(handler, body)
        elif path.endswith("/chat/completions"):
            self._chat(handler, body)
        elif ":countTokens" in path:
            self._record(handler, body, False)
            handler._plain(200, b'{"totalTokens": 100}')
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            self._gemini(handler, body, stream=":streamGenerateContent" in path)
        else:
            self._record(handler, body, False)
            handler._plain(404, b'{"error": "not found"}')

    def _step(self, api: str, done: int, offered: list[str]) -> Call | str:
        """The script's answer after ``done`` tool results: a call or the closing text."""
        script = self.script
        with self._lock:
            first_time = (api, done) not in self._steps_done
            self._steps_done.add((api, done))
        if first_time and script.on_step is not None:
            script.on_step(done)
        if done < len(script.calls):
            call = script.calls[done]
            name = resolve_tool(call.tool, offered)
            return Call(name, adapt_args(name, call.args))
        return script.reply

    # ---- Anthropic Messages -------------------------------------------------------------

    def _anthropic(self, handler: Any, body: dict[str, Any]) -> None:
        tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        main = any(name.lower() in ("bash", "read") for name in tools)  # Claude Code's, OpenCode's, Copilot's
        self._record(handler, body, main)
        if main:
            done = sum(1 for m in body.get("messages") or [] if isinstance(m.get("content"), list)
                       for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
            step = self._step("anthropic", done, tools)
        else:
            step = "ok"
        blocks = ([{"type": "tool_use", "id": f"toolu_{int(time.time() * 1e6)}", "name": step.tool,
                    "input": step.args}] if isinstance(step, Call) else [{"type": "text", "text": step}])
        stop = "tool_use" if isinstance(step, Call) else "end_turn"
        message = {"id": f"msg_{int(time.time() * 1e6)}", "type": "message", "role": "assistant",
                   "model": body.get("model", "claude"), "content": blocks, "stop_reason": stop,
                   "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 10}}
        if not body.get("stream"):
            handler._plain(200, json.dumps(message).encode())
            return
        events = [("message_start", {"type": "message_start", "message": {**message, "content": [],
                                                                            "stop_reason": None}})]
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                events += [("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {"type": "text", "text": ""}}),
                           ("content_block_delta", {"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "text_delta", "text": block["text"]}})]
            else:
                events += [("content_block_start", {"type": "content_block_start", "index": i,
                                                    "content_block": {**block, "input": {}}}),
                           ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                               "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 10}}),
                   ("message_stop", {"type": "message_stop"})]
        _sse(handler, events)

    # ---- OpenAI Responses ---------------------------------------------------------------

    def _openai(self, handler: Any, body: dict[str, Any]) -> None:
        # Codex offers an MCP server's tools inside a "namespace" tool: they are "<namespace>/<name>" here.
        tools = []
        for tool in body.get("tools") or []:
            if isinstance(tool, dict) and tool.get("type") == "namespace":
                tools += [f"{tool.get('name')}/{t.get('name')}" for t in tool.get("tools") or [] if isinstance(t, dict)]
            elif isinstance(tool, dict):
                tools.append(str(tool.get("name") or tool.get("type") or ""))
        main = bool(tools)
        self._record(handler, body, main)
        items = body.get("input") if isinstance(body.get("input"), list) else []
        done = sum(1 for item in items if isinstance(item, dict)
                   and str(item.get("type", "")).endswith("_call_output"))
        step = self._step("openai", done, tools) if main else "ok"
        rid = f"resp_{int(time.time() * 1e6)}"
        if isinstance(step, Call):
            namespace, _, name = step.tool.rpartition("/")
            item = {"type": "function_call", "id": f"fc_{rid}", "call_id": f"call_{rid}", "name": name,
                    "arguments": json.dumps(step.args), "status": "completed"}
            if namespace:
                item["namespace"] = namespace
        else:
            item = {"type": "message", "id": f"msg_{rid}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step, "annotations": []}]}
        response = {"id": rid, "object": "response", "status": "completed", "model": body.get("model"),
                    "output": [item], "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
                                                "input_tokens_details": {"cached_tokens": 0},
                                                "output_tokens_details": {"reasoning_tokens": 0}}}
        events = [("response.created", {"type": "response.created", "response": {**response, "status": "in_progress",
                                                                               "output": []}}),
                  ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                                  "item": item}),
                  ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                                 "item": item}),
                  ("response.completed", {"type": "response.completed", "response": response})]
        if body.get("stream") is False:
            handler._plain(200, json.dumps(response).encode())
        else:
            _sse(handler, events)

    # ---- OpenAI Chat Completions --------------------------------------------------------

    def _chat(self, handler: Any, body: dict[str, Any]) -> None:
        tools = [str((t.get("function") or {}).get("name") or t.get("name") or "")
                 for t in body.get("tools") or [] if isinstance(t, dict)]
        main = bool(tools)
        self._record(handler, body, main)
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        done = sum(1 for m in messages if m.get("role") == "tool")
        step = self._step("chat", done, tools) if main else _chat_side_answer(body)
        cid = f"chatcmpl_{int(time.time() * 1e6)}"
        if isinstance(step, Call):
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{cid}", "type": "function",
                 "function": {"name": step.tool, "arguments": json.dumps(step.args)}}]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": step}, "stop"
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        head = {"id": cid, "created": int(time.time()), "model": body.get("model") or "stub-model"}
        if not body.get("stream"):
            reply = {**head, "object": "chat.completion", "usage": usage,
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
            handler._plain(200, json.dumps(reply).encode())
            return
        _chat_sse(handler, _chat_chunks(head, message, finish, usage, _wants_usage(body)))

    # ---- Gemini -------------------------------------------------------------------------

    def _gemini(self, handler: Any, body: dict[str, Any], stream: bool) -> None:
        declared = [d for t in body.get("tools") or [] if isinstance(t, dict)
                    for d in t.get("functionDeclarations") or [] if isinstance(d, dict)]
        tools = [str(d.get("name")) for d in declared]
        main = bool(tools)
        self._record(handler, body, main)
        done = sum(1 for c in body.get("contents") or [] if isinstance(c, dict)
                   for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p)
        step = self._step("gemini", done, tools) if main else _gemini_side_answer(body)
        part = {"functionCall": {"name": step.tool, "args": step.args}} if isinstance(step, Call) else {"text": step}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
                 "modelVersion": "stub"}
        if stream:
            _sse(handler, [(None, chunk)])
        else:
            handler._plain(200, json.dumps(chunk).encode())


def _gemini_side_answer(body: dict[str, Any]) -> str:
    """Side requests ask for JSON (next speaker, model routing); give each a valid answer."""
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        return _json_side_answer(config.get("responseSchema") or config.get("responseJsonSchema") or {})
    return "ok"


def _json_side_answer(schema: Any) -> str:
    """A valid JSON answer to a side request asking for JSON of ``schema``."""
    text = json.dumps(schema)
    if "next_speaker" in text:
        return json.dumps({"reasoning": "the model answered", "next_speaker": "user"})
    if "model_choice" in text:
        return json.dumps({"reasoning": "simple", "model_choice": "flash"})
    if "complexity_score" in text:
        return json.dumps({"complexity_reasoning": "simple", "complexity_score": 1})
    return "{}"


def _chat_side_answer(body: dict[str, Any]) -> str:
    """A Chat Completions side request (title, summary, JSON check): text, or JSON when asked."""
    form = body.get("response_format") or {}
    if isinstance(form, dict) and form.get("type") in ("json_object", "json_schema"):
        return _json_side_answer(form.get("json_schema") or {})
    return "ok"


def _wants_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def _chat_chunks(head: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, int],
                 with_usage: bool) -> list[dict[str, Any]]:
    """A message as stream chunks: the role, its text or tool-call deltas, the finish, the usage."""
    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {**head, "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    for i, call in enumerate(message.get("tool_calls") or []):
        function = call["function"]
        chunks += [chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                          "function": {"name": function["name"], "arguments": ""}}]}),
                   chunk({"tool_calls": [{"index": i, "function": {"arguments": function["arguments"]}}]})]
    if message.get("content"):
        chunks.append(chunk({"content": message["content"]}))
    chunks.append(chunk({}, finish))
    if with_usage:
        chunks.append({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    return chunks


def resolve_tool(logical: str, offered: list[str]) -> str:
    """The offered tool a logical name means: itself, else the one it names the end of
    (``memory_query`` is Claude's ``mcp__ai-memory__memory_query``), else a known synonym."""
    if logical in offered:
        return logical
    ends = [name for name in offered if name.endswith(logical)]
    if ends:
        return ends[0]
    for synonym in _SYNONYMS.get(logical, ()):
        if synonym in offered:
            return synonym
    return logical


def adapt_args(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A logical shell call's ``command`` under the name the CLI's shell tool takes."""
    if tool == "exec_command" and "command" in args:
        return {"cmd": args["command"], **{k: v for k, v in args.items() if k != "command"}}
    if tool == "run_commands" and "command" in args:  # Cline runs a list of commands
        return {"commands": [args["command"]], **{k: v for k, v in args.items() if k != "command"}}
    return args


_SYNONYMS = {"shell": ("Bash", "bash", "exec_command", "shell", "run_shell_command", "local_shell", "run_commands")}


def _sse(handler: Any, events: list[tuple[str | None, Any]], done: bool = False) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for name, data in events:
        prefix = f"event: {name}\n" if name else ""
        handler.wfile.write(f"{prefix}data: {json.dumps(data)}\n\n".encode())
        handler.wfile.flush()
    if done:
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
    handler.close_connection = True


def _chat_sse(handler: Any, chunks: list[dict[str, Any]]) -> None:
    """Chat Completions streaming: unnamed ``data:`` events, then ``data: [DONE]``."""
    _sse(handler, [(None, c) for c in chunks], done=True)
