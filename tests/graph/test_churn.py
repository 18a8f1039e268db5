"""The orchestrator's churn guard, and the example every tool error carries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.llm.toolcalls import salvage
from deep_research.nodes.planning import Research, WriteTodos
from deep_research.researcher.graph import WebSearch
from tests.support.graph_scripts import NO_CLARIFY, call, run, script_for, tool_results
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch


async def run_state(context: dict[str, Any]) -> dict[str, Any]:
    """The whole final state (the graph's output leaves out `todos`)."""
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "churn"}}
    await graph.ainvoke({"messages": [{"role": "user", "content": "q"}]}, config, context=context)
    return (await graph.aget_state(config)).values


def plan(n: int) -> dict[str, object]:
    return {"todos": [{"content": f"Plan version {n}", "status": "pending"}]}


def answers(out: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in tool_results(out["messages"])}


async def test_two_todo_only_turns_lock_the_plan_and_the_run_still_researches(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def churner(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn < 3:  # ignores the lock notice once, as small models do
            return AIMessage("", tool_calls=[call("write_todos", plan(turn), f"t{turn}")])
        if not any(m.tool_call_id == "r" for m in tool_results(messages)):
            return AIMessage("", tool_calls=[call("research", {"topic": "alpha topic"}, "r")])
        return AIMessage("# Report\n\nDone.")

    use_script(script_for(churner))
    out = await run_state(NO_CLARIFY)
    told = answers(out)
    assert "Plan saved" in str(told["t0"].content) and "locked" not in str(told["t0"].content)
    assert "Plan saved" in str(told["t1"].content) and "locked" in str(told["t1"].content)
    assert told["t2"].status == "error" and "Plan locked" in str(told["t2"].content)
    assert out["todos"] == [{"content": "Plan version 1", "status": "pending"}]
    assert told["r"].status == "success" and scripted_search.queries, "research still ran"


async def test_todo_calls_are_capped_per_run_without_changing_state(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def reviser(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn in (0, 2, 3):
            return AIMessage("", tool_calls=[call("write_todos", plan(turn), f"t{turn}")])
        if turn == 1:
            return AIMessage("", tool_calls=[call("research", {"topic": "alpha topic"}, "r")])
        return AIMessage("# Report")

    use_script(script_for(reviser))
    out = await run_state({**NO_CLARIFY, "max_todo_updates": 2, "max_todo_only_turns": 5})
    told = answers(out)
    assert "locked" in str(told["t2"].content), "the call that reaches the cap says so"
    assert told["t3"].status == "error" and "Plan locked" in str(told["t3"].content)
    assert out["todos"] == [{"content": "Plan version 2", "status": "pending"}]


@pytest.mark.slow
async def test_the_same_call_three_times_in_a_row_is_not_run_again(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def stuck(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn < 3:
            return AIMessage("", tool_calls=[call("research", {"topic": "same topic"}, f"r{turn}")])
        return AIMessage("# Report")

    model = use_script(script_for(stuck))
    out = await run(NO_CLARIFY)
    told = answers(out)
    assert told["r0"].status == told["r1"].status == "success"
    assert told["r2"].status == "error" and "Not run" in str(told["r2"].content)
    # The run's search cache answers the second identical query; count researchers instead.
    researchers_started = [m for m, tools in model.calls if "web_search" in tools and len(m) == 2]
    assert len(researchers_started) == 2, "the third identical research never ran"


async def test_every_tool_error_carries_a_valid_one_line_example(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    bad_orchestrator_calls = [
        call("research", {"subject": "x"}, "e1"),
        call("browse", {"url": "x"}, "e2"),
        call("write_todos", {"todos": [{"status": "done"}]}, "e3"),
        call("write_todos", {"unparsed_arguments": "{todos: ["}, "e4"),
    ]

    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn == 0:
            return AIMessage("", tool_calls=bad_orchestrator_calls)
        if turn < 4:  # a mixed reply, then the same research until it is refused
            calls = [call("research", {"topic": "alpha topic"}, f"r{turn}")]
            if turn == 1:
                calls.append(call("write_todos", plan(1), "e5"))
            return AIMessage("", tool_calls=calls)
        return AIMessage("# Report")

    def researcher(messages: list[BaseMessage]) -> AIMessage:
        if not tool_results(messages):
            return AIMessage(
                "",
                tool_calls=[
                    call("fetch", {"url": "x"}, "s1"),
                    call("web_search", {"queries": "not a list"}, "s2"),
                ],
            )
        return AIMessage("Findings without sources.")

    model = use_script(script_for(orchestrator, researcher))
    out = await run(NO_CLARIFY)
    errors = [m for m in tool_results(out["messages"]) if m.status == "error"]
    for messages, _ in model.calls:
        errors += [m for m in tool_results(messages) if m.status == "error"]
    kinds = {m.tool_call_id for m in errors}
    assert {"e1", "e2", "e3", "e4", "e5", "r3", "s1", "s2"} <= kinds
    for error in errors:
        text = str(error.content)
        assert "Example: " in text, text
        example = text.rsplit("Example: ", 1)[1]
        assert "\n" not in example, "one line"
        found = salvage(example, [WriteTodos, Research, WebSearch]).calls
        assert len(found) == 1, example
        schema = {"write_todos": WriteTodos, "research": Research, "web_search": WebSearch}
        schema[found[0]["name"]].model_validate(found[0]["args"])
