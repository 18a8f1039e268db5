"""The fake OpenAI / Tavily servers work with the real client libraries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import httpx
import openai
import pytest
from aiohttp import web
from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from tavily import AsyncTavilyClient

from tests.support.fakes.http_server import BackgroundServer
from tests.support.fakes.openai_server import (
    InFlightBarrier,
    Reply,
    ScriptedOpenAIServer,
    ToolCall,
    last_user_text,
    system_text,
    tools_offered,
)
from tests.support.fakes.tavily_server import FakeTavilyServer, topic_corpus

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
            "required": ["query"],
        },
    },
}


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def tavily() -> Iterator[FakeTavilyServer]:
    with FakeTavilyServer() as srv:
        yield srv


def chat(srv: ScriptedOpenAIServer, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(model="test-model", base_url=srv.base_url, api_key="x", **kwargs)


@pytest.mark.asyncio
async def test_background_server_handles_concurrent_requests() -> None:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(text=request.match_info["n"])

    app = web.Application()
    app.router.add_get("/echo/{n}", hello)
    with BackgroundServer(app) as srv:
        assert srv.url.startswith("http://127.0.0.1:") and srv.port > 0
        async with aiohttp.ClientSession() as session:

            async def fetch(n: int) -> str:
                async with session.get(f"{srv.url}/echo/{n}") as resp:
                    return await resp.text()

            got = await asyncio.gather(*(fetch(n) for n in range(100)))
    assert got == [str(n) for n in range(100)]


@pytest.mark.asyncio
async def test_ainvoke_text_and_request_log() -> None:
    def brain(body: dict[str, Any]) -> Reply:
        return Reply(content=f"echo: {last_user_text(body)} / {system_text(body)}")

    with ScriptedOpenAIServer(brain) as srv:
        msg = await chat(srv).ainvoke([SystemMessage("be brief"), HumanMessage("hi there")])
        assert msg.content == "echo: hi there / be brief"
        assert msg.usage_metadata is not None and msg.usage_metadata["total_tokens"] > 0
        (body,) = srv.requests
        assert body["model"] == "test-model"
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert not body.get("stream") and tools_offered(body) == set()
        assert srv.auth_headers == ["Bearer x"]
        srv.reset()
        assert srv.requests == [] and srv.auth_headers == []


@pytest.mark.asyncio
async def test_astream_reassembles_tool_calls() -> None:
    def brain(body: dict[str, Any]) -> Reply:
        assert body["stream"] is True
        assert tools_offered(body) == {"web_search"}
        return Reply(
            content="Let me search for that.",
            tool_calls=[
                ToolCall("web_search", {"query": "quantum dots", "k": 3}),
                ToolCall("web_search", {"query": "perovskites"}),
            ],
        )

    with ScriptedOpenAIServer(brain) as srv:
        llm = chat(srv, stream_usage=True).bind_tools([SEARCH_TOOL])
        full: AIMessageChunk | None = None
        count = 0
        async for chunk in llm.astream("find things"):
            assert isinstance(chunk, AIMessageChunk)
            full = chunk if full is None else full + chunk
            count += 1
        assert count > 5 and full is not None
        assert full.content == "Let me search for that."
        assert [(c["name"], c["args"]) for c in full.tool_calls] == [
            ("web_search", {"query": "quantum dots", "k": 3}),
            ("web_search", {"query": "perovskites"}),
        ]
        assert all(str(c["id"]).startswith("call_") for c in full.tool_calls)
        assert full.usage_metadata is not None and full.usage_metadata["output_tokens"] > 0
        assert srv.requests[0]["stream_options"] == {"include_usage": True}


@pytest.mark.asyncio
async def test_nonstreaming_tool_calls_and_broken_json() -> None:
    def brain(body: dict[str, Any]) -> Reply:
        return Reply(
            tool_calls=[ToolCall("web_search", {"query": "a"}), ToolCall("web_search", "{oops")]
        )

    with ScriptedOpenAIServer(brain) as srv:
        msg = await chat(srv).bind_tools([SEARCH_TOOL]).ainvoke("go")
        assert msg.content == ""
        assert [c["args"] for c in msg.tool_calls] == [{"query": "a"}]
        assert [c["args"] for c in msg.invalid_tool_calls] == ["{oops"]


@pytest.mark.asyncio
async def test_error_status_raises_bad_request() -> None:
    with ScriptedOpenAIServer(lambda body: Reply(status=400, error_message="nope")) as srv:
        with pytest.raises(openai.BadRequestError, match="nope"):
            await chat(srv, max_retries=0).ainvoke("hi")
        assert len(srv.requests) == 1


@pytest.mark.asyncio
async def test_bodies_over_one_mebibyte_are_refused_with_413_and_their_size_logged() -> None:
    with ScriptedOpenAIServer(lambda body: Reply(content="ok")) as srv:
        llm = chat(srv, max_retries=0)
        with pytest.raises(openai.APIStatusError) as error:
            await llm.ainvoke("x" * srv.MAX_BODY_BYTES)
        assert error.value.status_code == 413
        assert "Maximum request body size" in error.value.response.text
        assert (await llm.ainvoke("x" * (srv.MAX_BODY_BYTES - 1000))).content == "ok"
        assert len(srv.requests) == 1, "the brain never sees a refused body"
        [size] = srv.oversized
        assert size > srv.MAX_BODY_BYTES


@pytest.mark.asyncio
async def test_error_body_is_sent_as_given() -> None:
    llama = {"error": {"code": 400, "message": "too big", "type": "exceed_context_size_error"}}
    with ScriptedOpenAIServer(lambda body: Reply(status=400, error_body=llama)) as srv:
        with pytest.raises(openai.BadRequestError) as error:
            await chat(srv, max_retries=0).ainvoke("hi")
    assert error.value.type == "exceed_context_size_error"
    assert error.value.message == "Error code: 400 - too big"


@pytest.mark.asyncio
async def test_models_endpoint() -> None:
    with ScriptedOpenAIServer(lambda body: Reply()) as srv:
        async with openai.AsyncOpenAI(base_url=srv.base_url, api_key="x") as client:
            page = await client.models.list()
        assert [m.id for m in page.data] == ["test-model"]


@pytest.mark.asyncio
async def test_barrier_releases_two_concurrent_requests() -> None:
    barrier = InFlightBarrier(2, timeout=10.0)

    async def brain(body: dict[str, Any]) -> Reply:
        return Reply(content=json.dumps(await barrier.wait()))

    with ScriptedOpenAIServer(brain) as srv:
        llm = chat(srv, max_retries=0)
        results = await asyncio.gather(llm.ainvoke("a"), llm.ainvoke("b"))
        assert [r.content for r in results] == ["true", "true"]
        assert barrier.max_in_flight == 2 and barrier.released
        assert srv.max_in_flight == 2


@pytest.mark.asyncio
async def test_barrier_times_out_with_single_request() -> None:
    barrier = InFlightBarrier(2, timeout=0.5)

    async def brain(body: dict[str, Any]) -> Reply:
        return Reply(content=json.dumps(await barrier.wait()))

    with ScriptedOpenAIServer(brain) as srv:
        msg = await chat(srv, max_retries=0).ainvoke("alone")
        assert msg.content == "false"
        assert barrier.max_in_flight == 1 and not barrier.released


def test_message_helpers_handle_content_parts() -> None:
    body = {
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "sys"}]},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": None},
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
        ],
        "tools": [SEARCH_TOOL],
    }
    assert system_text(body) == "sys"
    assert last_user_text(body) == "ab"
    assert tools_offered(body) == {"web_search"}
    assert last_user_text({}) == "" and tools_offered({}) == set()


@pytest.mark.asyncio
async def test_tavily_search(tavily: FakeTavilyServer) -> None:
    client = AsyncTavilyClient(api_key="tvly-test", api_base_url=tavily.url)
    try:
        resp = await client.search("solid state batteries", max_results=4)
    finally:
        await client.close()
    results = resp["results"]
    assert [r["score"] for r in results] == [0.9, 0.75, 0.6, 0.45]
    assert results[0]["url"] == "https://example.org/solid-state-batteries/0"
    assert "solid state batteries" in results[0]["content"]
    assert tavily.requests[0]["query"] == "solid state batteries"
    assert tavily.requests[0]["max_results"] == 4
    assert tavily.auth_headers == ["Bearer tvly-test"]
    assert tavily.returned_urls == {r["url"] for r in results}
    assert topic_corpus("solid state batteries", 4) == [
        {k: r[k] for k in ("url", "title", "content", "score")} for r in results
    ]


@pytest.mark.asyncio
async def test_tavily_failure_marker(tavily: FakeTavilyServer) -> None:
    async with AsyncTavilyClient(api_key="tvly-test", api_base_url=tavily.url) as client:
        with pytest.raises(httpx.HTTPStatusError):
            await client.search("please FAIL_SEARCH now")
    assert len(tavily.requests) == 1 and tavily.returned_urls == set()
