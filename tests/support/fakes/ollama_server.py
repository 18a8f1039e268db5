"""A scripted Ollama chat API (``POST /api/chat``) for tests.

The same brains as :class:`ScriptedOpenAIServer` answer it: Ollama's request is nearly the
OpenAI chat shape already (tool-call arguments are objects, not JSON text), and the reply
goes back whole (``"stream": false``) or as newline-delimited JSON chunks, the last one
``done`` with the token counts. ``drop_first`` connections are closed without a reply, as
a server restarting does.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from .http_server import JsonApiServer
from .openai_server import Brain, ask


def openai_shape(body: dict[str, Any]) -> dict[str, Any]:
    """An Ollama request as the OpenAI chat body the brains read."""
    messages = []
    for message in body.get("messages") or []:
        shaped = {k: v for k, v in message.items() if k != "tool_calls"}
        calls = message.get("tool_calls") or []
        if calls:
            shaped["tool_calls"] = [
                {
                    "id": f"call_{index}",
                    "type": "function",
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": json.dumps(call["function"].get("arguments") or {}),
                    },
                }
                for index, call in enumerate(calls)
            ]
        messages.append(shaped)
    return {**body, "messages": messages, "tools": body.get("tools") or []}


class FakeOllamaServer(JsonApiServer):
    """Fake Ollama server; point ``OLLAMA_HOST`` at ``url``."""

    def __init__(self, brain: Brain, drop_first: int = 0) -> None:
        self.brain = brain
        self.drop_first = drop_first
        self.dropped = 0
        app = web.Application(client_max_size=64 << 20)
        app.router.add_post("/api/chat", self._chat)
        super().__init__(app)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        with self._lock:
            self._keep(body, request)
            drop = self.dropped < self.drop_first
            self.dropped += drop
        if drop and request.transport is not None:
            request.transport.close()  # no status line at all: the client sees a hang-up
            return web.Response(status=499)
        try:
            reply = await ask(self.brain, openai_shape(body))
        except Exception as exc:  # report brain bugs to the client, loudly
            return web.json_response({"error": f"brain raised {exc}"}, status=500)
        if reply.status != 200:
            return web.json_response({"error": reply.error_message or "scripted"}, reply.status)
        calls = [
            {"function": {"name": call.name, "arguments": _arguments(call.arguments)}}
            for call in reply.tool_calls
        ]
        base = {"model": body.get("model"), "created_at": datetime.now(UTC).isoformat()}
        produced = len(reply.content) + sum(len(c.arguments_text()) for c in reply.tool_calls)
        done = {
            "done": True,
            "done_reason": "length" if reply.finish_reason == "length" else "stop",
            "total_duration": 1000,
            "prompt_eval_count": reply.prompt_tokens or max(1, len(json.dumps(body)) // 4),
            "eval_count": reply.completion_tokens or max(1, produced // 4),
        }
        if body.get("stream") is False:
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if calls:
                message["tool_calls"] = calls
            return web.json_response({**base, "message": message, **done})
        stream = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await stream.prepare(request)

        async def line(message: dict[str, Any], **extra: Any) -> None:
            chunk = {**base, "message": {"role": "assistant", **message}, **extra}
            await stream.write(json.dumps(chunk).encode() + b"\n")

        size = max(1, -(-len(reply.content) // 3))
        for start in range(0, len(reply.content), size):
            await line({"content": reply.content[start : start + size]}, done=False)
        if calls:  # Ollama sends the calls whole, in one chunk before the last
            await line({"content": "", "tool_calls": calls}, done=False)
        await line({"content": ""}, **done)
        await stream.write_eof()
        return stream


def _arguments(arguments: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
