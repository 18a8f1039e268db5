"""lenient_chat: tool-call arguments that are JSON but not an object cost a call, not the reply."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from aiohttp import web
from langchain_core.messages import AIMessage, HumanMessage

from deep_research.llm.lenient_chat import NOT_AN_OBJECT, LenientChatOpenAI, for_local_server
from tests.support.fakes.http_server import BackgroundServer
from tests.support.fakes.openai_server import Reply, ScriptedOpenAIServer, ToolCall


def _model(base_url: str) -> LenientChatOpenAI:
    return LenientChatOpenAI(model="test-model", base_url=base_url, api_key="x", max_retries=0)  # type: ignore[arg-type]


Ask = Callable[[Reply], Awaitable[AIMessage]]


@pytest.fixture
def ask() -> Iterator[Ask]:
    """Ask the model once, over a scripted server that answers with the reply given."""
    replies: list[Reply] = []
    with ScriptedOpenAIServer(lambda body: replies.pop(0)) as server:

        async def ask(reply: Reply) -> AIMessage:
            replies.append(reply)
            message = await _model(server.base_url).ainvoke([HumanMessage("go")])
            assert isinstance(message, AIMessage)
            return message

        yield ask


@pytest.mark.parametrize("arguments", ['"heat pumps"', "[1, 2]", "42", "true", "null"])
async def test_json_that_is_not_an_object_becomes_an_invalid_call(ask: Ask, arguments: str) -> None:
    good = ToolCall("think", {"note": "kept"})
    message = await ask(Reply(content="hi", tool_calls=[good, ToolCall("search", arguments)]))
    assert message.content == "hi"
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [("think", {"note": "kept"})]
    [bad] = message.invalid_tool_calls
    assert (bad["name"], bad["args"], bad["error"]) == ("search", arguments, NOT_AN_OBJECT)
    assert bad["id"] == "call_2"


async def test_broken_json_is_left_to_langchain_openai(ask: Ask) -> None:
    message = await ask(Reply(tool_calls=[ToolCall("search", '{"query": "x"')]))
    [bad] = message.invalid_tool_calls
    assert bad["name"] == "search" and bad["error"] != NOT_AN_OBJECT
    assert message.tool_calls == []


async def test_ordinary_calls_are_untouched(ask: Ask) -> None:
    message = await ask(Reply(tool_calls=[ToolCall("search", {"query": "heat pumps"})]))
    assert [c["args"] for c in message.tool_calls] == [{"query": "heat pumps"}]
    assert message.invalid_tool_calls == []


async def test_hostile_arguments_cost_only_that_call(ask: Ask) -> None:
    deep = "[" * 100_000 + "]" * 100_000  # JSON nested past the recursion limit
    calls = [ToolCall("a", deep), ToolCall("b", '"\\u0000\x1b[31m<script>"'), ToolCall("c", {})]
    message = await ask(Reply(tool_calls=calls))
    assert [c["name"] for c in message.tool_calls] == ["c"]
    assert sorted(c["name"] or "" for c in message.invalid_tool_calls) == ["a", "b"]


class _RawServer(BackgroundServer):
    """Answers every chat completion with one fixed JSON payload, as a quirky server would."""

    def __init__(self, payload: dict[str, Any]) -> None:
        async def reply(request: web.Request) -> web.Response:
            return web.json_response(payload)

        app = web.Application()
        app.router.add_post("/v1/chat/completions", reply)
        super().__init__(app)


async def test_arguments_sent_as_an_object_not_a_string_are_read() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": {"q": 1}}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    payload = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [choice],
    }
    with _RawServer(payload) as server:
        reply = await _model(server.url + "/v1").ainvoke("go")
    assert isinstance(reply, AIMessage)
    assert [(c["name"], c["args"], c["id"]) for c in reply.tool_calls] == [
        ("search", {"q": 1}, "c1")
    ]
    assert json.dumps(reply.invalid_tool_calls) == "[]"


def test_a_local_payload_gets_max_tokens_and_no_null_content_whatever_its_shape() -> None:
    payload = {
        "max_completion_tokens": 4096,
        "messages": [{"role": "assistant", "content": None, "tool_calls": []}, "odd", {}],
    }
    shaped = for_local_server(payload)
    assert shaped["max_tokens"] == 4096
    assert shaped["messages"][0]["content"] == "" and shaped["messages"][1:] == ["odd", {}]
    assert for_local_server({"max_tokens": 10, "max_completion_tokens": 20})["max_tokens"] == 10
    assert for_local_server({"input": "responses api"}) == {"input": "responses api"}


def test_readable_usage_takes_whole_counts_only() -> None:
    from deep_research.llm.lenient_chat import readable_usage

    assert readable_usage(None) and readable_usage({})
    assert readable_usage({"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4})
    assert readable_usage({"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0}})
    for junk in (
        "junk",
        [1],
        {"prompt_tokens": [1]},
        {"completion_tokens": 1.5},
        {"completion_tokens": True},
        {"prompt_tokens_details": "x"},
        {"completion_tokens_details": {"reasoning_tokens": "2"}},
    ):
        assert not readable_usage(junk), junk
