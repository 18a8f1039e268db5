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
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from deep_research.context import Context, read_endpoints
from deep_research.graph import builder
from deep_research.models import ModelDeadlineError, chat_model
from tests.support.brain import ResearchBrain
from tests.support.fakes.openai_server import Reply
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
