"""A scripted, OpenAI-compatible ``/v1/chat/completions`` server for tests.

Replies come from a *brain* callback that receives each parsed request body and
returns a :class:`Reply` (sync or async), so tests route on the request content
instead of relying on call order.

The reply vocabulary and the request readers live in :mod:`.openai_brain`; they are
re-exported here, so tests import everything from this module.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

from aiohttp import web

from .http_server import JsonApiServer
from .openai_brain import (
    Brain,
    InFlightBarrier,
    Reply,
    ToolCall,
    ask,
    last_user_text,
    message_text,
    system_text,
    tools_offered,
)

__all__ = [
    "Brain",
    "InFlightBarrier",
    "Reply",
    "STALL_LIMIT",
    "ScriptedOpenAIServer",
    "ToolCall",
    "ask",
    "last_user_text",
    "message_text",
    "system_text",
    "tools_offered",
]


def _chunks(text: str, pieces: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


# A handler left sending keep-alives or trickling stops by itself after this many seconds.
STALL_LIMIT = 120.0


async def _write(stream: web.StreamResponse, data: bytes, trickle: float) -> None:
    """`data` at once, or one byte every `trickle` seconds."""
    if trickle <= 0:
        await stream.write(data)
        return
    for index in range(len(data)):
        await asyncio.sleep(trickle)
        await stream.write(data[index : index + 1])


async def _keep_alive(request: web.Request, streaming: bool, every: float) -> web.StreamResponse:
    """Headers, then only keep-alive lines, never a reply: what a stalled proxy sends."""
    kind = "text/event-stream" if streaming else "application/json"
    stream = web.StreamResponse(headers={"Content-Type": kind, "Cache-Control": "no-cache"})
    await stream.prepare(request)
    line = b": keep-alive\n\n" if streaming else b"\n"
    for _ in range(max(1, int(STALL_LIMIT / every))):
        try:
            await stream.write(line)
        except ConnectionResetError:  # the client gave up: what the test waits for
            break
        await asyncio.sleep(every)
    return stream


class ScriptedOpenAIServer(JsonApiServer):
    """Fake OpenAI endpoint; use as ``with ScriptedOpenAIServer(brain) as srv``.

    Bodies over ``MAX_BODY_BYTES`` are refused with HTTP 413 before the brain sees them,
    as aiohttp does by default; their sizes are kept in ``oversized``.
    """

    MAX_BODY_BYTES = 1 << 20

    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self._oversized: list[int] = []
        self._client_ports: list[int] = []
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
        self.in_flight = 0
        self.max_in_flight = 0
        # Read whole, so a refused body's size can be logged; the limit is enforced below.
        app = web.Application(client_max_size=64 * self.MAX_BODY_BYTES)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._models)
        super().__init__(app)

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    @property
    def oversized(self) -> list[int]:
        """Sizes in bytes of the bodies refused with HTTP 413 as too large, in arrival order."""
        return self._snapshot(self._oversized)

    @property
    def client_ports(self) -> list[int]:
        """The client's TCP port of each request, in arrival order: one connection reused
        shows as one port."""
        return self._snapshot(self._client_ports)

    def reset(self) -> None:
        super().reset()
        with self._lock:
            self._client_ports.clear()
            self._oversized.clear()
            self.max_in_flight = self.in_flight

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": "test-model", "object": "model", "created": 0, "owned_by": "test"}]
        return web.json_response({"object": "list", "data": data})

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        if len(raw) > self.MAX_BODY_BYTES:
            with self._lock:
                self._oversized.append(len(raw))
            limit = self.MAX_BODY_BYTES
            text = f"Maximum request body size {limit} exceeded, actual body size {len(raw)}"
            return web.Response(status=413, text=text)
        body: dict[str, Any] = json.loads(raw)
        with self._lock:
            self._keep(body, request)
            peer = request.transport.get_extra_info("peername") if request.transport else None
            self._client_ports.append(int(peer[1]) if peer else 0)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._respond(request, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _respond(self, request: web.Request, body: dict[str, Any]) -> web.StreamResponse:
        try:
            reply = await ask(self.brain, body)
        except Exception as exc:  # report brain bugs to the client, loudly
            return _error_response(500, f"brain raised {type(exc).__name__}: {exc}")
        if reply.status != 200 and isinstance(reply.error_body, dict):
            return web.json_response(reply.error_body, status=reply.status)
        if reply.status != 200 and isinstance(reply.error_body, str):
            return web.Response(status=reply.status, text=reply.error_body)
        if reply.status != 200:
            return _error_response(reply.status, reply.error_message or "scripted error")
        if reply.keepalive > 0:
            return await _keep_alive(request, bool(body.get("stream")), reply.keepalive)
        try:
            return await self._reply(request, body, reply)
        except ConnectionResetError:  # a trickled reply the client stopped reading
            return web.Response(status=499)

    async def _reply(
        self, request: web.Request, body: dict[str, Any], reply: Reply
    ) -> web.StreamResponse:

        n = next(self._ids)
        calls = [(f"call_{next(self._call_ids)}", tc) for tc in reply.tool_calls]
        produced = len(reply.content) + sum(len(tc.arguments_text()) for tc in reply.tool_calls)
        prompt = reply.prompt_tokens or max(1, len(json.dumps(body.get("messages", []))) // 4)
        completion = reply.completion_tokens or max(1, produced // 4)
        usage = (
            reply.usage
            if reply.usage is not None
            else {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        )
        base = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": body.get("model")}
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        if not body.get("stream"):
            content = reply.content if reply.content or not calls else None
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                message["tool_calls"] = [
                    {"id": cid, "type": "function", "function": tc.as_openai_function()}
                    for cid, tc in calls
                ]
            choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            payload = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
            if reply.omit_usage:
                del payload["usage"]
            if reply.trickle <= 0:
                return web.json_response(payload)
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            await _write(response, json.dumps(payload).encode(), reply.trickle)
            await response.write_eof()
            return response

        stream = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await stream.prepare(request)

        async def send(choices: list[dict[str, Any]], **extra: Any) -> None:
            chunk = {**base, "object": "chat.completion.chunk", "choices": choices, **extra}
            await _write(stream, f"data: {json.dumps(chunk)}\n\n".encode(), reply.trickle)

        def delta(d: dict[str, Any], reason: str | None = None) -> list[dict[str, Any]]:
            return [{"index": 0, "delta": d, "finish_reason": reason, "logprobs": None}]

        await send(delta({"role": "assistant", "content": ""}))
        for piece in _chunks(reply.content):
            await send(delta({"content": piece}))
        for index, (call_id, tc) in enumerate(calls):
            function = {"name": tc.name, "arguments": ""}
            head = {"index": index, "id": call_id, "type": "function", "function": function}
            await send(delta({"tool_calls": [head]}))
            for piece in _chunks(tc.arguments_text()):
                part = {"index": index, "function": {"arguments": piece}}
                await send(delta({"tool_calls": [part]}))
        await send(delta({}, finish))
        if (body.get("stream_options") or {}).get("include_usage") and not reply.omit_usage:
            await send([], usage=usage)
        await stream.write(b"data: [DONE]\n\n")
        await stream.write_eof()
        return stream


def _error_response(status: int, message: str) -> web.Response:
    error = {"message": message, "type": "invalid_request_error", "code": None}
    return web.json_response({"error": error}, status=status)
