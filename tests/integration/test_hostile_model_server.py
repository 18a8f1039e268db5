"""Broken or hostile model servers: stalled replies, tool-call arguments of the wrong type.

The real ChatOpenAI talks to the scripted server over 127.0.0.1; every case asserts the
trustworthy outcome: a clear error within a bound, or a tool error and a finished run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from deep_research.config.endpoints import read_endpoints
from deep_research.config.settings import Context
from deep_research.graph import builder
from deep_research.llm.chat_models import chat_model
from deep_research.llm.errors import ModelDeadlineError
from tests.support.brain import ResearchBrain, role_of
from tests.support.fakes.openai_server import Reply, ToolCall, message_text
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.live import QUESTION, serve

DEADLINE = 2.0
# Generous: the deadline is 2 s; this only proves the call did not hang for minutes.
WITHIN = 30.0


@dataclass
class StallingBrain(ResearchBrain):
    """Stalls every reply the way `stall` says until `stalling` is switched off."""

    stall: dict[str, float] | None = None
    stalling: bool = True

    async def __call__(self, body: dict[str, Any]) -> Reply:
        reply = await super().__call__(body)
        if self.stalling and self.stall:
            reply.trickle = self.stall.get("trickle", 0.0)
            reply.keepalive = self.stall.get("keepalive", 0.0)
        return reply


STALLS = {
    "trickle": {"trickle": 0.5},  # 2 bytes a second: each read is quick, the reply endless
    "keepalive": {"keepalive": 0.2},  # only keep-alive lines, never a reply
}


async def _run(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    streaming: bool,
    config: RunnableConfig,
    value: Any = QUESTION,
) -> None:
    context = {"allow_clarification": False}
    if streaming:  # as under `langgraph dev`: tokens streamed, so ChatOpenAI streams
        async for _ in graph.astream(value, config, context=context, stream_mode="messages"):
            pass
    else:
        await graph.ainvoke(value, config, context=context)


@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize("stall", list(STALLS))
async def test_stalled_model_reply_ends_in_a_deadline_error_naming_endpoint_and_limit(
    monkeypatch: pytest.MonkeyPatch, stall: str, streaming: bool
) -> None:
    monkeypatch.setenv("LLM_TIMEOUT", "5")  # per read: never trips on these servers
    monkeypatch.setenv("LLM_CALL_DEADLINE", str(DEADLINE))
    brain = StallingBrain(stall=STALLS[stall])
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "stalled"}}
    with serve(brain, monkeypatch) as llm:
        started = time.monotonic()
        with pytest.raises(ModelDeadlineError) as raised:
            await _run(graph, streaming, config)
        elapsed = time.monotonic() - started
        message = str(raised.value)
        assert llm.base_url in message and "2 s" in message and "LLM_CALL_DEADLINE" in message
        assert elapsed < WITHIN
        # An outage, not a lost run: once the server answers, the same thread finishes.
        brain.stalling = False
        await _run(graph, streaming, config, value=None)
    state = (await graph.aget_state(config)).values
    assert state["final_report"]


def test_call_deadline_default_leaves_room_for_loading_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert read_endpoints().call_deadline == 600 * 3  # every attempt may use LLM_TIMEOUT
    monkeypatch.setenv("LLM_TIMEOUT", "5")
    assert read_endpoints().call_deadline == 900  # never less: mlx loads weights first
    monkeypatch.setenv("LLM_CALL_DEADLINE", "42")
    assert read_endpoints().call_deadline == 42


def test_local_client_gives_up_connecting_long_before_a_read_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timeout = chat_model(Context(), "orchestrator").request_timeout  # type: ignore[attr-defined]
    assert isinstance(timeout, httpx.Timeout)
    assert timeout.read == 600 and timeout.connect == 10


# Tool-call arguments that are JSON but not an object, as the model server sends them.
NON_OBJECT_ARGUMENTS = ['"heat pumps"', '["heat pumps", "cold"]', "42", "true", "null"]
CALLS = {"orchestrator": "research", "researcher": "web_search"}
EXAMPLES = {"orchestrator": '{"topic":', "researcher": '{"queries":'}


@dataclass
class NonObjectArgumentsBrain(ResearchBrain):
    """`role` first calls its tool with `arguments`; after the tool error, calls it right."""

    role: str = "orchestrator"
    arguments: str = '"heat pumps"'

    async def __call__(self, body: dict[str, Any]) -> Reply:
        if role_of(body) != self.role:
            return await super().__call__(body)
        results = [message_text(m) for m in body["messages"] if m.get("role") == "tool"]
        if not results:
            return Reply(tool_calls=[ToolCall(CALLS[self.role], self.arguments)])
        if len(results) == 1:  # the answer to the bad call: now call the tool properly
            if self.role == "orchestrator":
                return Reply(tool_calls=[ToolCall("research", {"topic": "heat pump costs"})])
            return Reply(tool_calls=[ToolCall("web_search", {"queries": ["heat pump costs"]})])
        return await super().__call__(body)


def _tool_replies(bodies: list[dict[str, Any]], role: str) -> list[str]:
    """The tool messages the model playing `role` was sent, in its last request."""
    last = [b for b in bodies if role_of(b) == role][-1]
    return [message_text(m) for m in last["messages"] if m.get("role") == "tool"]


@pytest.mark.parametrize("streaming", [False, True], ids=["invoke", "stream"])
@pytest.mark.parametrize("role", list(CALLS))
@pytest.mark.parametrize("arguments", NON_OBJECT_ARGUMENTS)
async def test_non_object_tool_arguments_are_answered_as_a_tool_error_and_the_run_goes_on(
    monkeypatch: pytest.MonkeyPatch,
    tavily: FakeTavilyServer,
    role: str,
    arguments: str,
    streaming: bool,
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "non-object"}}
    with serve(NonObjectArgumentsBrain(role=role, arguments=arguments), monkeypatch) as llm:
        await _run(graph, streaming, config)
    state = (await graph.aget_state(config)).values
    assert state["final_report"] and not state.get("failures")
    error = _tool_replies(llm.requests, role)[0]
    assert error.startswith("Invalid arguments") and "JSON object" in error
    assert f"Example: {CALLS[role]}(" in error or EXAMPLES[role] in error
    assert tavily.requests, "the good call after the error searched"


def _completion(*arguments: Any) -> dict[str, Any]:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": "research", "arguments": a}}
        for i, a in enumerate(arguments)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {"id": "x", "model": "m", "choices": [{"index": 0, "message": message}]}


def test_tool_arguments_not_sent_as_a_string_are_read_without_losing_the_reply() -> None:
    """Servers that send `arguments` as a JSON value instead of a JSON string."""
    model = chat_model(Context(), "orchestrator")
    response = _completion({"topic": "as an object"}, ["a list"], 7, '{"topic": "fine"}')
    reply = model._create_chat_result(response).generations[0].message  # type: ignore[attr-defined]
    assert isinstance(reply, AIMessage)
    assert [c["args"] for c in reply.tool_calls] == [{"topic": "as an object"}, {"topic": "fine"}]
    assert [(c["id"], c["args"]) for c in reply.invalid_tool_calls] == [
        ("c1", '["a list"]'),
        ("c2", "7"),
    ]


@dataclass
class JunkUsageBrain(ResearchBrain):
    """Researches, but every reply's `usage` is malformed in the way `usage` says."""

    usage: Any = None

    async def __call__(self, body: dict[str, Any]) -> Reply:
        reply = await super().__call__(body)
        reply.usage = self.usage
        return reply


@pytest.mark.parametrize(
    "usage",
    [
        "junk",
        {"prompt_tokens": [1], "completion_tokens": {}},
        {"prompt_tokens": 5, "completion_tokens": 2, "prompt_tokens_details": "x"},
        {"prompt_tokens": 5, "completion_tokens": 2, "completion_tokens_details": {"r": "x"}},
        [1, 2],
    ],
    ids=["string", "wrong-types", "details-string", "details-junk", "list"],
)
async def test_malformed_usage_is_estimated_and_the_run_finishes(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer, usage: Any
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "junk-usage"}}
    with serve(JunkUsageBrain(usage=usage), monkeypatch):
        await _run(graph, False, config)
    state = (await graph.aget_state(config)).values
    assert state["final_report"] and not state.get("failures") and tavily.requests
    counted = state["usage"]
    assert counted["calls"] >= 2 and counted["estimated"] == counted["calls"]
    assert counted["tokens_in"] > 0 and counted["tokens_out"] > 0, "estimated, not zero"
