"""The real langchain-anthropic client against a fake Anthropic Messages API on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from deep_research.config.settings import load_context
from deep_research.graph import builder
from deep_research.llm.errors import ContextTooLongError, ModelDeadlineError
from deep_research.llm.models import ModelEndpointError, role_model
from deep_research.text import secrets
from tests.support.brain import ResearchBrain
from tests.support.fakes.anthropic_server import FakeAnthropicServer
from tests.support.fakes.openai_server import Brain, Reply, ToolCall, tools_offered
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import QUESTION, cited

KEY = "sk-ant-test-SECRET-0123456789abcdef"
SPEC = "anthropic:claude-sonnet-4-5"
EVERY_ROLE = {f"{role}_model": SPEC for role in ("clarifier", "orchestrator", "researcher")}


class ping(BaseModel):  # noqa: N801 - the tool's name as the model sees it
    """Answer the check."""

    word: str = Field(description="The word to send back")


def pinging(body: dict[str, Any]) -> Reply:
    if "ping" in tools_offered(body) and not any(m["role"] == "tool" for m in body["messages"]):
        return Reply("Calling it.", tool_calls=[ToolCall("ping", {"word": "ready"})])
    return Reply("pong")


@pytest.fixture
def anthropic(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The fake API answering with `request.param` (default: `pinging`); env points at it."""
    brain: Brain = getattr(request, "param", pinging)
    with FakeAnthropicServer(brain) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("LLM_MAX_RETRIES", "0")
        yield server


MESSAGES: list[BaseMessage] = [SystemMessage("You check things."), HumanMessage("Check.")]


@pytest.mark.slow
async def test_tool_use_without_streaming_reads_the_call_and_the_usage(
    anthropic: FakeAnthropicServer,
) -> None:
    model = role_model(load_context(EVERY_ROLE), "orchestrator")
    reply = await model.ask(MESSAGES, [ping])
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("ping", {"word": "ready"})]
    assert reply.usage_metadata and reply.usage_metadata["output_tokens"] > 0
    [body] = anthropic.requests
    assert body["model"] == "claude-sonnet-4-5" and not body.get("stream")
    assert body["system"] == "You check things."
    assert [t["name"] for t in body["tools"]] == ["ping"]
    assert "temperature" not in body, "unset: the provider's own default"
    assert anthropic.api_keys == [KEY]
    assert model.endpoint == anthropic.url and model.retries == 0, "the client retries itself"


async def test_tool_use_streamed_as_server_sent_events_reassembles(
    anthropic: FakeAnthropicServer,
) -> None:
    model = role_model(load_context(EVERY_ROLE), "researcher").model.bind_tools([ping])
    chunks = [chunk async for chunk in model.astream(MESSAGES)]
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    assert len(chunks) > 3
    assert [(c["name"], c["args"]) for c in whole.tool_calls] == [("ping", {"word": "ready"})]
    assert whole.usage_metadata and whole.usage_metadata["input_tokens"] > 0
    assert anthropic.requests[0]["stream"] is True


async def test_a_tool_s_argument_named_like_a_secret_goes_back_whole(
    anthropic: FakeAnthropicServer,
) -> None:
    """Sent back in the conversation, a reply's `tool_use` block is scrubbed as any content
    is (a field named like a credential blanked), but its tool call keeps its arguments, and
    the client sends a block whose call it has from the tool call: the tool's own argument
    named `api_key` goes back as the model wrote it."""
    arguments = {"word": "ready", "api_key": "the-word"}
    block = {"type": "tool_use", "id": "toolu_01", "name": "ping", "input": arguments}
    assert secrets.scrub([block])[0]["input"]["api_key"] != "the-word", "what is at stake"
    asked = AIMessage(
        content=[{"type": "text", "text": "Calling it."}, block],
        tool_calls=[{"name": "ping", "args": arguments, "id": "toolu_01"}],
    )
    answered = ToolMessage("pong", tool_call_id="toolu_01")
    model = role_model(load_context(EVERY_ROLE), "orchestrator")
    await model.ask([*MESSAGES, asked, answered], [ping])
    [body] = anthropic.requests
    sent = [
        part
        for message in body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "tool_use"
    ]
    assert [part["input"] for part in sent] == [arguments]


async def test_a_set_temperature_is_sent(anthropic: FakeAnthropicServer) -> None:
    context = load_context({**EVERY_ROLE, "orchestrator_temperature": 0.7})
    await role_model(context, "orchestrator").ask(MESSAGES)
    assert anthropic.requests[0]["temperature"] == 0.7


@pytest.mark.parametrize("retries", [0, 1])
async def test_llm_max_retries_reaches_the_anthropic_client(
    monkeypatch: pytest.MonkeyPatch, retries: int
) -> None:
    answers = iter([Reply(status=529, error_message="Overloaded"), Reply("ok")])
    with FakeAnthropicServer(lambda body: next(answers)) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("LLM_MAX_RETRIES", str(retries))
        model = role_model(load_context(EVERY_ROLE), "orchestrator")
        if retries:
            assert (await model.ask(MESSAGES)).text == "ok"
        else:
            with pytest.raises(Exception, match="Overloaded"):
                await model.ask(MESSAGES)
        assert len(server.requests) == retries + 1, "the client's own retries, as configured"


@pytest.mark.parametrize("anthropic", [lambda body: Reply("late", delay=60)], indirect=True)
async def test_the_whole_call_deadline_stops_a_slow_provider(
    anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLM_CALL_DEADLINE", "0.5")
    with pytest.raises(ModelDeadlineError, match="did not finish one call within 0.5 s"):
        await role_model(load_context(EVERY_ROLE), "orchestrator").ask(MESSAGES)


@pytest.mark.parametrize("anthropic", [lambda body: Reply("never", keepalive=0.05)], indirect=True)
async def test_the_whole_call_deadline_stops_a_stream_of_pings(
    anthropic: FakeAnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Streamed (as under LangGraph's "messages" stream mode): every read gets an event in
    # time, so only the deadline around the call can end it. It covers the client's first
    # request too (its imports, on a loaded machine more than 0.5 s): long enough to send it.
    monkeypatch.setenv("LLM_CALL_DEADLINE", "2")
    role = role_model(load_context(EVERY_ROLE), "orchestrator")
    streaming = dataclasses.replace(role, model=role.model.model_copy(update={"streaming": True}))
    with pytest.raises(ModelDeadlineError, match="did not finish one call within 2 s"):
        await streaming.ask(MESSAGES)
    assert [body["stream"] for body in anthropic.requests] == [True]


@pytest.mark.parametrize(
    "anthropic",
    [lambda body: Reply(status=401, error_message=f"invalid x-api-key {KEY}")],
    indirect=True,
)
async def test_a_key_echoed_in_an_error_is_scrubbed(anthropic: FakeAnthropicServer) -> None:
    with pytest.raises(Exception) as error:
        await role_model(load_context(EVERY_ROLE), "orchestrator").ask(MESSAGES)
    assert type(error.value).__name__.endswith("AuthenticationError")
    for text in (str(error.value), repr(error.value), repr(getattr(error.value, "body", ""))):
        assert KEY not in text and "[REDACTED]" in text


def too_long_once() -> Brain:
    def brain(body: dict[str, Any]) -> Reply:
        if len(brain.sizes) == 0:  # type: ignore[attr-defined]
            brain.sizes.append(1)  # type: ignore[attr-defined]
            return Reply(status=400, error_message="prompt is too long: 250000 tokens > 200000")
        return Reply("fits now")

    brain.sizes = []  # type: ignore[attr-defined]
    return brain


@pytest.mark.parametrize("anthropic", [too_long_once()], indirect=True)
async def test_too_long_for_the_context_is_shortened_and_retried(
    anthropic: FakeAnthropicServer,
) -> None:
    history: list[BaseMessage] = [SystemMessage("s"), *[HumanMessage("x" * 4000)] * 6]
    reply = await role_model(load_context(EVERY_ROLE), "orchestrator").ask(history)
    assert reply.text == "fits now"
    first, second = anthropic.requests
    assert len(str(second["messages"])) < len(str(first["messages"]))
    assert issubclass(ContextTooLongError, ModelEndpointError)


async def test_an_unreachable_api_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    with pytest.raises(
        ModelEndpointError, match=f"Cannot reach the model server at http://127.0.0.1:{port}"
    ):
        await role_model(load_context(EVERY_ROLE), "orchestrator").ask(MESSAGES)


class Tags(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    async def on_chat_model_start(
        self,
        serialized: Any,
        messages: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        **kw: Any,
    ) -> None:
        self.seen.append(tags or [])


@pytest.mark.parametrize("anthropic", [ResearchBrain()], indirect=True)
@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "stream"])
async def test_a_full_run_on_anthropic_cites_only_what_search_returned(
    anthropic: FakeAnthropicServer, tavily: FakeTavilyServer, streaming: bool
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    tags = Tags()
    config: Any = {"configurable": {"thread_id": "a"}, "callbacks": [tags]}
    context = {**EVERY_ROLE, "allow_clarification": False}
    if streaming:
        pieces = [
            chunk
            async for chunk, _ in graph.astream(
                QUESTION, config, context=context, stream_mode="messages"
            )
        ]
        assert pieces, "tokens were streamed"
    else:
        await graph.ainvoke(QUESTION, config, context=context)
    state = (await graph.aget_state(config)).values
    urls = cited(state["final_report"])
    assert urls and urls <= tavily.returned_urls
    assert all(bool(body.get("stream")) is streaming for body in anthropic.requests)
    assert len(anthropic.requests) == 6
    assert {t for seen in tags.seen for t in seen if t.startswith(("role:", "model:"))} == {
        "role:orchestrator",
        "role:researcher",
        f"model:{SPEC}",
    }
