"""A scripted Anthropic Messages API (``POST /v1/messages``) for tests.

The same brains as :class:`ScriptedOpenAIServer` answer it: each request is translated to
the OpenAI chat shape the brains read (system text, user/assistant/tool messages, function
tools), and their :class:`Reply` is sent back as Anthropic content blocks (``text``,
``tool_use``), whole or as the SSE event sequence of a streamed message.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from aiohttp import web

from .http_server import JsonApiServer
from .openai_server import Brain, ToolCall, ask


def openai_shape(body: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic request as the OpenAI chat body the brains read."""
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "".join(part.get("text", "") for part in system if isinstance(part, dict))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in body.get("messages") or []:
        messages.extend(_messages(message))
    tools = [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("input_schema", {}),
            },
        }
        for tool in body.get("tools") or []
    ]
    return {**body, "messages": messages, "tools": tools}


def _messages(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"role": message["role"], "content": content}]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            function = {"name": block["name"], "arguments": json.dumps(block.get("input", {}))}
            calls.append({"id": block["id"], "type": "function", "function": function})
        elif kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                inner = "".join(p.get("text", "") for p in inner if isinstance(p, dict))
            results.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": inner})
    shaped: list[dict[str, Any]] = list(results)
    if texts or calls or not results:
        one: dict[str, Any] = {"role": message["role"], "content": "".join(texts)}
        if calls:
            one["tool_calls"] = calls
        shaped.append(one)
    return shaped


def _input(call: ToolCall) -> dict[str, Any]:
    """A tool_use block's input: always an object in this API."""
    if isinstance(call.arguments, dict):
        return call.arguments
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


class FakeAnthropicServer(JsonApiServer):
    """Fake Anthropic endpoint; point ``ANTHROPIC_BASE_URL`` at ``url``."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self._keys: list[str] = []
        self._ids = itertools.count(1)
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/v1/messages", self._messages)
        super().__init__(app)

    @property
    def api_keys(self) -> list[str]:
        """The key each request carried."""
        return self._snapshot(self._keys)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        with self._lock:
            self._keep(body, request)
            # `x-api-key`, or (anthropic SDK 2.x) `Authorization: Bearer <key>`.
            bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
            self._keys.append(request.headers.get("x-api-key") or bearer)
        try:
            reply = await ask(self.brain, openai_shape(body))
        except Exception as exc:  # report brain bugs to the client, loudly
            return _error(500, "api_error", f"brain raised {type(exc).__name__}: {exc}")
        if reply.status != 200:
            if isinstance(reply.error_body, dict):
                return web.json_response(reply.error_body, status=reply.status)
            kind = "invalid_request_error" if reply.status < 500 else "api_error"
            return _error(reply.status, kind, reply.error_message or "scripted error")
        n = next(self._ids)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.content}]
        if not reply.content and reply.tool_calls:
            blocks = []
        for index, call in enumerate(reply.tool_calls):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{n}_{index}",
                    "name": call.name,
                    "input": _input(call),
                }
            )
        stop = reply.finish_reason or ("tool_use" if reply.tool_calls else "end_turn")
        stop = {"length": "max_tokens", "stop": "end_turn"}.get(stop, stop)
        produced = len(reply.content) + sum(len(c.arguments_text()) for c in reply.tool_calls)
        usage = {
            "input_tokens": reply.prompt_tokens or max(1, len(json.dumps(body["messages"])) // 4),
            "output_tokens": reply.completion_tokens or max(1, produced // 4),
        }
        message = {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            return web.json_response(message)
        return await self._stream(request, message, reply.keepalive)

    async def _stream(
        self, request: web.Request, message: dict[str, Any], keepalive: float = 0.0
    ) -> web.StreamResponse:
        """The event sequence of a streamed message, each block in a few deltas."""
        stream = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await stream.prepare(request)

        async def event(kind: str, data: dict[str, Any]) -> None:
            payload = json.dumps({"type": kind, **data})
            await stream.write(f"event: {kind}\ndata: {payload}\n\n".encode())

        usage = message["usage"]
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        await event("message_start", {"message": start})
        await event("ping", {})
        # `keepalive`: pings every that many seconds and never the message, until the client
        # leaves (no read ever waits long, so only a whole-call deadline ends it).
        while keepalive > 0:
            await asyncio.sleep(keepalive)
            try:
                await event("ping", {})
            except ConnectionResetError:
                return stream
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                await event(
                    "content_block_start",
                    {"index": index, "content_block": {"type": "text", "text": ""}},
                )
                for piece in _pieces(block["text"]):
                    delta = {"type": "text_delta", "text": piece}
                    await event("content_block_delta", {"index": index, "delta": delta})
            else:
                head = {**block, "input": {}}
                await event("content_block_start", {"index": index, "content_block": head})
                for piece in _pieces(json.dumps(block["input"])):
                    delta = {"type": "input_json_delta", "partial_json": piece}
                    await event("content_block_delta", {"index": index, "delta": delta})
            await event("content_block_stop", {"index": index})
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        await event(
            "message_delta",
            {"delta": delta, "usage": usage},  # cumulative, as the API sends
        )
        await event("message_stop", {})
        await stream.write_eof()
        return stream


def _pieces(text: str, count: int = 3) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _error(status: int, kind: str, message: str) -> web.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return web.json_response(body, status=status)
