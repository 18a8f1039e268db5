"""The todo list in a whole run: each item once, ticked off as its research comes back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from tests.support.graph_scripts import NO_CLARIFY, call, script_for, tool_results
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

PLAN = ["Heat pump costs", "Cold climate performance", "heat pump  COSTS"]


def planner(messages: list[BaseMessage]) -> AIMessage:
    """Plans with one item written twice, researches each item (in its own words), reports."""
    turn = sum(isinstance(m, AIMessage) for m in messages)
    if turn == 0:
        todos = [{"content": c, "status": "pending"} for c in PLAN]
        return AIMessage("", tool_calls=[call("write_todos", {"todos": todos}, "t")])
    if turn == 1:
        topics = ["heat pump costs", "Cold climate  performance"]
        calls = [call("research", {"topic": t}, f"r{i}") for i, t in enumerate(topics)]
        return AIMessage("", tool_calls=calls)
    return AIMessage("# Report\n\nDone.")


async def test_a_plan_holds_each_item_once_and_research_ticks_each_off(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(planner))
    graph = builder.compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "todos"}}
    question = {"messages": [{"role": "user", "content": "Are heat pumps worth it?"}]}
    shown = [
        event["todos"]
        async for event in graph.astream(question, config, context=NO_CLARIFY, stream_mode="custom")
        if event.get("event") == "todos"
    ]
    state = (await graph.aget_state(config)).values
    saved = next(m for m in tool_results(state["messages"]) if m.tool_call_id == "t")
    assert "Plan saved (2 todos)" in str(saved.content), "the repeated item is not kept"
    first = [{"content": c, "status": "pending"} for c in PLAN[:2]]
    done = [{"content": c, "status": "completed"} for c in PLAN[:2]]
    assert shown == [first, done], "the live view is told when the research came back"
    assert state["todos"] == done, "Studio and the SDK see the ticks in state"
