"""The real langchain-ollama client against a fake Ollama /api/chat on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from deep_research.config.settings import load_context
from deep_research.graph import builder
from deep_research.llm.errors import ModelDeadlineError
from deep_research.llm.models import ModelEndpointError, role_model
from tests.support.brain import ResearchBrain
from tests.support.fakes.ollama_server import FakeOllamaServer
from tests.support.fakes.openai_server import Reply, ToolCall, tools_offered
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import QUESTION, cited

SPEC = "ollama:qwen3:8b"
EVERY_ROLE = {f"{role}_model": SPEC for role in ("clarifier", "orchestrator", "researcher")}
MESSAGES: list[BaseMessage] = [SystemMessage("You check things."), HumanMessage("Check.")]


class ping(BaseModel):  # noqa: N801 - the tool's name as the model sees it
    """Answer the check."""

    word: str = Field(description="The word to send back")


def pinging(body: dict[str, Any]) -> Reply:
    if "ping" in tools_offered(body) and not any(m["role"] == "tool" for m in body["messages"]):
        return Reply("Calling it.", tool_calls=[ToolCall("ping", {"word": "ready"})])
    return Reply("pong")


def start(monkeypatch: pytest.MonkeyPatch, server: FakeOllamaServer) -> FakeOllamaServer:
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    return server


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The fake server answering with `request.param` (default: `pinging`); env points at it."""
    with FakeOllamaServer(getattr(request, "param", pinging)) as server:
        yield start(monkeypatch, server)


async def test_streamed_ndjson_tool_call_with_local_temperature_and_usage(
    ollama: FakeOllamaServer,
) -> None:
    model = role_model(load_context(EVERY_ROLE), "orchestrator")
    reply = await model.ask(MESSAGES, [ping])
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("ping", {"word": "ready"})]
    assert reply.usage_metadata and reply.usage_metadata["input_tokens"] > 0
    [body] = ollama.requests
    assert body["model"] == "qwen3:8b" and body["stream"] is True
    assert body["options"]["temperature"] == 0.1, "Ollama serves small local models"
    assert [t["function"]["name"] for t in body["tools"]] == ["ping"]
    assert model.endpoint == ollama.url and model.retries == 0


async def test_without_streaming_the_reply_is_read_whole(ollama: FakeOllamaServer) -> None:
    context = load_context({**EVERY_ROLE, "researcher_temperature": 0.6})
    model = role_model(context, "researcher").model.bind_tools([ping])
    reply = await model.ainvoke(MESSAGES, stream=False)
    assert [c["name"] for c in reply.tool_calls] == ["ping"]
    assert ollama.requests[0]["stream"] is False
    assert ollama.requests[0]["options"]["temperature"] == 0.6


@pytest.mark.parametrize("retries", [0, 1])
async def test_a_dropped_connection_is_retried_around_the_client(
    monkeypatch: pytest.MonkeyPatch, retries: int
) -> None:
    with FakeOllamaServer(pinging, drop_first=1) as server:
        start(monkeypatch, server)
        monkeypatch.setenv("LLM_MAX_RETRIES", str(retries))
        model = role_model(load_context(EVERY_ROLE), "orchestrator")
        assert model.retries == retries, "ChatOllama has no max_retries of its own"
        if retries:
            assert (await model.ask(MESSAGES)).text == "pong"
        else:
            with pytest.raises(ModelEndpointError, match="Cannot reach the model server"):
                await model.ask(MESSAGES)
        assert len(server.requests) == retries + 1


@pytest.mark.parametrize("ollama", [lambda body: Reply("late", delay=60)], indirect=True)
async def test_the_whole_call_deadline_stops_a_stalled_server(
    ollama: FakeOllamaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_CALL_DEADLINE", "0.5")
    with pytest.raises(ModelDeadlineError, match="within 0.5 s"):
        await role_model(load_context(EVERY_ROLE), "orchestrator").ask(MESSAGES)


async def test_no_server_is_one_line_naming_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    with pytest.raises(ModelEndpointError) as error:
        await role_model(load_context(EVERY_ROLE), "orchestrator").ask(MESSAGES)
    [line] = str(error.value).splitlines()
    assert f"127.0.0.1:{port}" in line and "ollama serve" in line


@pytest.mark.parametrize("ollama", [ResearchBrain()], indirect=True)
async def test_a_full_run_on_ollama_cites_only_what_search_returned(
    ollama: FakeOllamaServer, tavily: FakeTavilyServer
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "o"}}
    context = {**EVERY_ROLE, "allow_clarification": False}
    out = await graph.ainvoke(QUESTION, config, context=context)
    urls = cited(out["final_report"])
    assert urls and urls <= tavily.returned_urls
    assert len(ollama.requests) == 6 and all(b["stream"] for b in ollama.requests)
