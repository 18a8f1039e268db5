"""One model call's attempts, each seen: which failures are retried, in what words, and what a
reply says about itself (cut at its completion limit, mended by `toolcalls`).

`RoleModel` (its requests: sending.py) retries here rather than inside the client, so every
attempt is a `model_retry` event the live view and `replay` show: a time-out and its retry
read as such, not as one long call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar

import httpx
import openai
from langchain_core.exceptions import ModelTimeoutError
from langchain_core.messages import AIMessage

from deep_research.runtime import progress
from deep_research.text.wording import one_line

log = logging.getLogger(__name__)

T = TypeVar("T")
# `empty`: an empty reply nudged once; `too_long`: a request the server's context refused,
# sent again shortened.
RetryReason = Literal["timeout", "server_error", "cut", "empty", "too_long"]

ERROR_CHARS = 300  # a server's error, in one line: its cause, not its whole dump
BACKOFF_SECONDS = 0.5  # before the first retry; doubled each time, as openai's client does
MAX_BACKOFF_SECONDS = 8.0
# HTTP statuses a server may answer differently a moment later (busy, restarting, a proxy).
RETRIED_STATUSES = frozenset({408, 409, 429})


def seen_retry(role: str, spec: str, attempt: int, reason: RetryReason, error: str) -> None:
    """Say that `role`'s call is sent again (its `attempt`, 2 or more), and why."""
    log.warning("the %s model call is tried again (%s): %s", role, reason, error)
    progress.emit("model_retry", role=role, model=spec, reason=reason, attempt=attempt, error=error)


def seen_cut(role: str, spec: str, reply: AIMessage, limit: int | None, outcome: str) -> None:
    """Say that `role`'s reply ended at its completion limit, and what was done with it."""
    tokens = usage_out(reply) or limit
    log.warning("the %s reply was cut at %s tokens (%s)", role, tokens, outcome)
    progress.emit("reply_cut", role=role, model=spec, tokens_out=tokens, outcome=outcome)
    if outcome == "retried":
        seen_retry(role, spec, 2, "cut", f"the reply was cut at {tokens} tokens")


def timed_out(error: BaseException) -> bool:
    """Whether `error` is a read that outlasted LLM_TIMEOUT: the server was there, and slow.

    openai's client turns httpx's time-outs into `APITimeoutError`; one while connecting
    means no server answered at all, which is unreachable, not slow.
    """
    if isinstance(error, openai.APITimeoutError):
        return not isinstance(error.__cause__, httpx.ConnectTimeout)
    if isinstance(error, httpx.TimeoutException):
        return not isinstance(error, httpx.ConnectTimeout)
    return isinstance(error, ModelTimeoutError)


def retry_reason(error: BaseException) -> RetryReason | None:
    """Why `error` is worth another attempt, or None (a refused request, a bug)."""
    if timed_out(error):
        return "timeout"
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        return "server_error" if status >= 500 or status in RETRIED_STATUSES else None
    if isinstance(error, openai.APIConnectionError | ConnectionError | httpx.TransportError):
        return "server_error"  # a dropped connection, a server restarting
    return None


async def retried(
    send: Callable[[], Awaitable[T]],
    retries: int,
    seen: Callable[[int, RetryReason, BaseException], None],
) -> T:
    """`send()`, tried again up to `retries` times while it fails for a `retry_reason`;
    `seen(attempt, reason, error)` is told before each new attempt (2, 3, ...)."""
    for attempt in range(1, retries + 2):
        try:
            return await send()
        except Exception as error:
            reason = retry_reason(error)
            if reason is None or attempt > retries:
                raise
            seen(attempt + 1, reason, error)
            await asyncio.sleep(min(MAX_BACKOFF_SECONDS, BACKOFF_SECONDS * 2 ** (attempt - 1)))
    raise AssertionError("unreachable: the last attempt returns or raises")


def error_line(error: BaseException) -> str:
    """`error` in one line that names its cause: a server's validation dump becomes its first
    problem, with a word on the one it is known for (a message whose content is null)."""
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {_server_said(error)}"
    if timed_out(error):
        return "timed out"
    return one_line(f"{type(error).__name__}: {error}", ERROR_CHARS)


def _server_said(error: openai.APIStatusError) -> str:
    body = error.body
    problems = body.get("detail") if isinstance(body, Mapping) else body
    if isinstance(problems, list) and problems and isinstance(problems[0], Mapping):
        # FastAPI's validation list (llama-cpp-python): one entry per rejected field.
        first = problems[0]
        loc = first.get("loc")
        where = ".".join(str(part) for part in loc) if isinstance(loc, list | tuple) else ""
        said = f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return one_line(f"{said}{more}{_known_cause(str(problems))}", ERROR_CHARS)
    own = body.get("message") if isinstance(body, Mapping) else None
    # openai's `message` is "Error code: N - " and the whole body: the body's own words first.
    message = own if isinstance(own, str) and own else str(error.message or error)
    return one_line(f"{message}{_known_cause(str(body or message))}", ERROR_CHARS)


def _known_cause(text: str) -> str:
    if "'content'" in text and "'input': None" in text:
        return " — the server refuses a message whose content is null"
    return ""


def finish_reason(reply: AIMessage) -> str | None:
    """Why the model stopped, as the server said (`length`: cut at the completion limit)."""
    reason = reply.response_metadata.get("finish_reason")
    return reason if isinstance(reason, str) else None


def is_cut(reply: AIMessage) -> bool:
    """Whether the reply ended at its completion limit rather than where the model stopped."""
    return finish_reason(reply) in ("length", "max_tokens")  # OpenAI's name, Anthropic's


def calls_a_tool(reply: AIMessage) -> bool:
    """Whether the reply is (or tried to be) a tool call rather than text such as a report."""
    return bool(
        reply.tool_calls or reply.invalid_tool_calls or reply.additional_kwargs.get("tool_calls")
    )


def repairs(raw: AIMessage, settled: AIMessage) -> str | None:
    """What `toolcalls.settle` mended between the server's reply and the one used, or None."""
    if raw.invalid_tool_calls and settled.tool_calls:
        return f"{len(raw.invalid_tool_calls)} tool call(s) with broken JSON arguments repaired"
    if not raw.tool_calls and settled.tool_calls:
        names = ", ".join(sorted({call["name"] for call in settled.tool_calls}))
        return f"{len(settled.tool_calls)} tool call(s) read from the reply's text ({names})"
    return None


def usage_out(reply: AIMessage) -> int:
    """The reply's completion tokens as the server counted them (0: not said)."""
    usage: Any = reply.usage_metadata or {}
    value = usage.get("output_tokens", 0)
    return value if isinstance(value, int) else 0
