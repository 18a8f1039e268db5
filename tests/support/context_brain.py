"""The research brain behind a server whose context holds at most `max_chars` characters.

A request longer than that is refused the way real servers refuse it (`OVERFLOW_REPLIES`);
every refused size is logged, so a test can check that the retry is strictly shorter.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.support.brain import ResearchBrain, role_of
from tests.support.fakes.openai_server import Reply

Shape = Literal["openai", "llama.cpp", "vllm", "413"]

# The error bodies as each server sends them (vLLM's older, unwrapped form).
OVERFLOW_REPLIES: dict[Shape, Reply] = {
    "openai": Reply(
        status=400,
        error_body={
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, your "
                "messages resulted in 9120 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    "llama.cpp": Reply(
        status=400,
        error_body={
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 9120,
                "n_ctx": 8192,
            }
        },
    ),
    "vllm": Reply(
        status=400,
        error_body={
            "object": "error",
            "message": "This model's maximum context length is 8192 tokens. However, you "
            "requested 9120 tokens (8120 in the messages, 1000 in the completion). Please "
            "reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
    "413": Reply(status=413, error_body="413 Request Entity Too Large"),
}


def request_chars(body: dict[str, Any]) -> int:
    return len(json.dumps(body["messages"]))


@dataclass
class ContextWindowBrain:
    """`ResearchBrain`, refusing requests over `max_chars`; reports padded to grow requests."""

    shape: Shape
    max_chars: int
    report_padding: int = 0
    inner: ResearchBrain = field(default_factory=ResearchBrain)
    refused: list[int] = field(default_factory=list)

    async def __call__(self, body: dict[str, Any]) -> Reply:
        size = request_chars(body)
        if size > self.max_chars:
            self.refused.append(size)
            return OVERFLOW_REPLIES[self.shape]
        reply = await self.inner(body)
        if role_of(body) == "researcher" and reply.content and not reply.tool_calls:
            filler = "Heat pumps move heat rather than make it. " * (self.report_padding // 42)
            reply = dataclasses.replace(reply, content=f"{reply.content}\n\n{filler}")
        return reply
