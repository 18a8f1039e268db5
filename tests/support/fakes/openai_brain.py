"""What a brain of the scripted OpenAI server works with: the :class:`Reply` it answers with,
readers for the request it gets, and a barrier that proves calls ran in parallel.

``tests.support.fakes.openai_server`` serves the replies and re-exports every name here.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolCall:
    """A tool call the fake model emits; ``dict`` arguments are JSON-encoded."""

    name: str
    arguments: str | dict[str, Any] = field(default_factory=dict)

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)

    def as_openai_function(self) -> dict[str, str]:
        return {"name": self.name, "arguments": self.arguments_text()}


@dataclass
class Reply:
    """What the fake model answers with."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200
    error_message: str = ""
    # Sent as the whole error response when set: a dict as JSON, a str as plain text, so a
    # test can give the exact shape a real server uses (llama.cpp, vLLM, a proxy).
    error_body: dict[str, Any] | str | None = None
    delay: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # None: "tool_calls" when there are calls, else "stop"; "length" plays a server's cap.
    finish_reason: str | None = None
    # Seconds between bytes of the reply (its headers go at once): a server that trickles,
    # so no single read ever waits long enough to trip a per-read timeout.
    trickle: float = 0.0
    # Seconds between keep-alive lines sent instead of any reply, until the client leaves
    # (SSE comments when streaming, blank lines before a JSON body otherwise).
    keepalive: float = 0.0
    # Sent as the reply's whole `usage` when set (any JSON, well formed or not): a server
    # whose usage is junk.
    usage: Any = None
    # No `usage` at all, as some OpenAI-compatible servers and proxies answer.
    omit_usage: bool = False


Brain = Callable[[dict[str, Any]], Reply | str | Awaitable[Reply | str]]


class InFlightBarrier:
    """One-shot barrier for brains: releases everyone once ``k`` callers wait together.

    ``wait()`` returns True when released, False if ``timeout`` elapses first.
    Callers arriving after the release pass straight through (returning True).
    Use only from the server's event loop.
    """

    def __init__(self, k: int, timeout: float = 10.0) -> None:
        if k < 1:
            raise ValueError("k must be >= 1")
        self.k = k
        self.timeout = timeout
        self.in_flight = 0
        self.max_in_flight = 0
        self.calls = 0
        self._released: asyncio.Event | None = None

    @property
    def released(self) -> bool:
        return self._released is not None and self._released.is_set()

    async def wait(self) -> bool:
        if self._released is None:
            self._released = asyncio.Event()
        event = self._released
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.in_flight >= self.k:
                event.set()
            await asyncio.wait_for(event.wait(), self.timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self.in_flight -= 1


def message_text(message: dict[str, Any]) -> str:
    """Text of one chat message whose ``content`` is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    texts = [part.get("text") for part in content or [] if isinstance(part, dict)]
    return "".join(text for text in texts if isinstance(text, str))


def tools_offered(body: dict[str, Any]) -> set[str]:
    """Names of the function tools offered in a request body (empty set when none)."""
    tools = body.get("tools") or []
    return {str(t["function"]["name"]) for t in tools if isinstance(t.get("function"), dict)}


def system_text(body: dict[str, Any]) -> str:
    """All system/developer message text, joined by blank lines."""
    messages = body.get("messages") or []
    texts = [message_text(m) for m in messages if m.get("role") in ("system", "developer")]
    return "\n\n".join(texts)


def last_user_text(body: dict[str, Any]) -> str:
    """Text of the last user message ("" when there is none)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return message_text(message)
    return ""


async def ask(brain: Brain, body: dict[str, Any]) -> Reply:
    """The brain's reply to a request in OpenAI's shape (text taken as the content), given
    after the reply's delay: a server thinking for that long before it answers."""
    result = brain(body)
    if inspect.isawaitable(result):
        result = await result
    reply = Reply(content=result) if isinstance(result, str) else result
    if reply.delay > 0:
        await asyncio.sleep(reply.delay)
    return reply
