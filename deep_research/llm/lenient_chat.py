"""`ChatOpenAI` that reads any tool-call arguments a server sends without failing the reply.

langchain-openai turns arguments that are not valid JSON into an invalid tool call, which
`toolcalls.settle` then answers as a tool error. Arguments that *are* JSON but not an object
(`"heat pumps"`, `[...]`, `42`, `true`, `null`) pass its parser and then fail pydantic's
check of `AIMessage.tool_calls`, so the whole reply is lost in a `ValidationError` before
any caller sees it. Streaming already makes such calls invalid (`AIMessageChunk` checks for
an object); here the non-streaming path does the same, before the message is built.

For a local server (`local_server`), requests are shaped so every OpenAI-compatible server
reads them: the completion limit goes as `max_tokens` too (llama-cpp-python ignores
`max_completion_tokens`), and an assistant message never has `content: null` (langchain-openai
sends it beside tool calls; llama-cpp-python refuses the request with HTTP 500).
"""

from __future__ import annotations

import json
from typing import Any

import openai
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, InvalidToolCall
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI

NOT_AN_OBJECT = "the arguments are JSON but not an object"


class LenientChatOpenAI(ChatOpenAI):
    """Tool calls whose arguments are not a JSON object become invalid tool calls."""

    local_server: bool = False  # shape requests for llama.cpp, llama-cpp-python, mlx, Ollama

    def _get_request_payload(
        self, input_: LanguageModelInput, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
        return for_local_server(payload) if self.local_server else payload

    def _create_chat_result(
        self,
        response: dict[str, Any] | openai.BaseModel,
        generation_info: dict[str, Any] | None = None,
    ) -> ChatResult:
        if not isinstance(response, dict | openai.BaseModel):
            return super()._create_chat_result(response, generation_info)  # its own error
        data = response if isinstance(response, dict) else response.model_dump(warnings=False)
        if "usage" in data and not readable_usage(data["usage"]):
            # A server's malformed count is no count: the reply is estimated (llm/spending.py).
            data = {key: value for key, value in data.items() if key != "usage"}
            response = data
        choices = data.get("choices")
        if not isinstance(choices, list):
            return super()._create_chat_result(response, generation_info)
        invalid: list[list[InvalidToolCall]] = []
        settled = []
        changed = False
        for choice in choices:
            message = choice.get("message") if isinstance(choice, dict) else None
            raw_calls = message.get("tool_calls") if isinstance(message, dict) else None
            if not isinstance(message, dict) or not isinstance(raw_calls, list):
                invalid.append([])
                settled.append(choice)
                continue
            kept, bad = _split(raw_calls)
            changed = changed or bool(bad) or kept != raw_calls
            invalid.append(bad)
            settled.append({**choice, "message": {**message, "tool_calls": kept}})
        if not changed:  # the usual case: langchain-openai reads the typed response itself
            return super()._create_chat_result(response, generation_info)
        result = super()._create_chat_result({**data, "choices": settled}, generation_info)
        for generation, bad in zip(result.generations, invalid, strict=True):
            if bad and isinstance(generation.message, AIMessage):
                generation.message.invalid_tool_calls.extend(bad)
        return result


USAGE_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def readable_usage(usage: object) -> bool:
    """Whether a reply's `usage` is what langchain-openai can read: absent (None), or an
    object whose counts are whole numbers and whose details are objects of whole numbers.
    Anything else ("junk", a list for a count) would raise inside the client, at every call
    and on every resume of the run."""
    if usage is None:
        return True
    if not isinstance(usage, dict):
        return False
    for key, value in usage.items():
        if key in USAGE_COUNTS and not (value is None or type(value) is int):
            return False
        if key.endswith("_details") and value is not None:
            if not isinstance(value, dict) or not all(
                v is None or type(v) is int for v in value.values()
            ):
                return False
    return True


def for_local_server(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` as every local server reads it: `max_tokens` beside `max_completion_tokens`,
    no message whose `content` is null."""
    limit = payload.get("max_completion_tokens")
    if isinstance(limit, int) and "max_tokens" not in payload:
        payload["max_tokens"] = limit
    messages = payload.get("messages")
    if isinstance(messages, list):
        payload["messages"] = [
            {**m, "content": ""}
            if isinstance(m, dict) and "content" in m and m["content"] is None
            else m
            for m in messages
        ]
    return payload


def _split(raw_calls: list[Any]) -> tuple[list[Any], list[InvalidToolCall]]:
    """The calls langchain-openai can read, and those whose arguments are not an object."""
    kept: list[Any] = []
    bad: list[InvalidToolCall] = []
    for raw in raw_calls:
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict):
            kept.append(raw)  # not a function call: langchain-openai decides
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # an object sent as JSON, not as a JSON string
            kept.append({**raw, "function": {**function, "arguments": json.dumps(arguments)}})
            continue
        if isinstance(arguments, str) and (not arguments or _is_object_or_broken(arguments)):
            kept.append(raw)  # an object, none, or not JSON: langchain-openai handles these
            continue
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        name = function.get("name")
        call_id = raw.get("id")
        bad.append(
            invalid_tool_call(
                name=name if isinstance(name, str) else None,
                args=text,
                id=call_id if isinstance(call_id, str) else None,
                error=NOT_AN_OBJECT,
            )
        )
    return kept, bad


def _is_object_or_broken(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments, strict=False), dict)
    except (ValueError, RecursionError):
        return True  # not JSON: langchain-openai makes it an invalid call itself
