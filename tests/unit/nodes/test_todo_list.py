"""`nodes.todo_list`: which items the research of the last reply ticks off."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deep_research.nodes import todo_list
from deep_research.state import RESEARCH, ResearchState, Todo
from deep_research.text.topics import as_topic
from tests.support.graph_scripts import call


def state(messages: list[Any], *items: str) -> ResearchState:
    todos = [Todo(content=item, status="pending") for item in items]
    return ResearchState(messages=messages, todos=todos)  # type: ignore[typeddict-item]


def reply(*topics: str) -> AIMessage:
    calls = [call(RESEARCH, {"topic": t}, f"r{i}") for i, t in enumerate(topics)]
    return AIMessage("", tool_calls=calls)


def answer(call_id: str, status: str = "success") -> ToolMessage:
    return ToolMessage("findings", tool_call_id=call_id, name=RESEARCH, status=status)


def test_research_with_findings_ticks_its_item_and_a_failure_does_not() -> None:
    long_item = "Grants " + "for heat pumps " * 40  # dispatched as a topic cut at a word
    messages = [HumanMessage("q"), reply("COSTS", "noise", as_topic(long_item))]
    messages += [answer("r0"), answer("r1", "error"), answer("r2")]
    update = todo_list.ticked(state(messages, "Costs", "Noise", long_item, "Other"))
    assert [t["status"] for t in update["todos"]] == [
        "completed",
        "pending",
        "completed",
        "pending",
    ]


def test_nothing_changes_without_research_answers_of_the_last_reply() -> None:
    earlier = [HumanMessage("q"), reply("Costs"), answer("r0")]
    later = AIMessage("", tool_calls=[call("write_todos", {"todos": []}, "t")])
    assert todo_list.ticked(state([*earlier, later], "Costs")) == {}, "only the last reply's"
    not_run = [HumanMessage("q"), reply("Costs"), answer("r0", "error")]
    assert todo_list.ticked(state(not_run, "Costs")) == {}, "a call not run ticks nothing"
    done = state(earlier)
    done["todos"] = [Todo(content="Costs", status="completed")]
    assert todo_list.ticked(done) == {}, "already ticked: no update, no event"
    assert todo_list.ticked(state([HumanMessage("q")], "Costs")) == {}
