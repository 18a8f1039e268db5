"""What the cost budget's graph tests share: every role priced as `openai:gpt-4o-mini`,
scripted replies that report their own usage, and a run of the whole graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    researcher,
    script_for,
)
from tests.support.scripted_model import ScriptedChatModel

Q = {"messages": [{"role": "user", "content": "q"}]}
THREE = ("alpha", "beta", "gamma")
PRICED = {f"{role}_model": "openai:gpt-4o-mini" for role in ("clarifier", "orchestrator")}
PRICED["researcher_model"] = "openai:gpt-4o-mini"
# Each scripted call reports 10,000 tokens in and 500 out: 1,500 + 300 = 1,800 µUSD.
CALL_USD = 0.0018


@pytest.fixture(autouse=True)
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Autouse where imported: the priced models' client wants a key; the scripted model
    answers, so it is never sent."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")


class Crash(BaseException):
    """Stands in for the process dying mid-call: nothing in the graph catches it."""


def reported(reply: AIMessage) -> AIMessage:
    reply.usage_metadata = {"input_tokens": 10_000, "output_tokens": 500, "total_tokens": 10_500}
    return reply


def priced_script(
    orchestrator: Callable[[list[BaseMessage]], AIMessage] | None = None,
) -> Callable[[list[BaseMessage], set[str]], AIMessage]:
    script = script_for(orchestrator or orchestrator_fanning_out(*THREE), researcher)
    return lambda messages, tools: reported(script(messages, tools))


def always_researching(messages: list[BaseMessage]) -> AIMessage:
    """An orchestrator that asks for three more topics every turn, never writing the report."""
    turn = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    calls = [call("research", {"topic": f"{t} {turn}"}, f"r{turn}{t}") for t in THREE]
    return AIMessage("", tool_calls=calls)


async def run(
    use_script: Callable[..., ScriptedChatModel],
    budget: float | None,
    orchestrator: Callable[[list[BaseMessage]], AIMessage] | None = None,
    **config: Any,
) -> tuple[dict[str, Any], ScriptedChatModel]:
    model = use_script(priced_script(orchestrator))
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "cost"}, **config}
    context = {**NO_CLARIFY, **PRICED, "max_cost_usd": budget, **config.pop("context", {})}
    await graph.ainvoke(Q, run_config, context=context)
    return (await graph.aget_state(run_config)).values, model
