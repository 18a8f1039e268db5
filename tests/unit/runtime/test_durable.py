"""runtime/durable.py: a call inside a graph step is a task whose answer outlives a stop."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from deep_research.runtime import durable


class State(TypedDict):
    done: list[str]


class Crash(BaseException):
    """The process dying mid-step: nothing in the graph catches it."""


def test_the_digest_is_stable_short_and_tells_parts_apart() -> None:
    assert durable.digest("a", "b") == durable.digest("a", "b")
    assert durable.digest("a", "b") != durable.digest("ab", "")
    assert len(durable.digest("x" * 100_000)) == 16


async def test_outside_a_graph_step_the_call_just_runs() -> None:
    async def send() -> str:
        return "sent"

    assert not durable.in_step()
    assert await durable.call("ask", "k", send) == "sent"


async def test_an_answered_call_is_not_sent_again_when_its_step_runs_again() -> None:
    sent: list[str] = []
    crash = {"now": True}

    async def step(state: State) -> dict[str, Any]:
        answers = []
        for query in ("one", "two"):

            async def send(query: str = query) -> str:
                sent.append(query)
                if query == "two" and crash["now"]:
                    raise Crash()
                return f"answer to {query}"

            answers.append(await durable.call("search", durable.digest(query), send))
        return {"done": answers}

    builder = StateGraph(State)
    builder.add_node(step)
    builder.add_edge(START, "step")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(Crash):
        await graph.ainvoke({"done": []}, config, durability="sync")
    crash["now"] = False
    out = await graph.ainvoke(None, config, durability="sync")
    assert out["done"] == ["answer to one", "answer to two"]
    assert sent == ["one", "two", "two"], "only the call cut off by the stop ran again"


async def test_each_call_runs_under_its_own_name() -> None:
    """langgraph keeps one runnable per module-level function: a shared function would run
    every call under the first name it was given, and another process would name them
    otherwise, so no saved answer would be found after a resume there."""
    names: list[str] = []

    async def step(state: State) -> dict[str, Any]:
        for kind in ("first", "second"):

            async def send() -> str:
                names.append(str(get_config()["configurable"]["checkpoint_ns"]))
                return "ok"

            await durable.call(kind, "k", send)
        return {"done": []}

    builder = StateGraph(State)
    builder.add_node(step)
    builder.add_edge(START, "step")
    await builder.compile().ainvoke({"done": []})
    assert "first_k:" in names[0] and "second_k:" in names[1], names
