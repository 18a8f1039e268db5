"""nodes/tool_answers.py: each call of a planning reply that is not research gets one answer."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from deep_research.nodes import churn
from deep_research.nodes.tool_answers import answer_tools
from deep_research.state import ChurnGuard, ResearchState


def _answers(calls: list[dict[str, Any]], guard: ChurnGuard | None = None) -> dict[str, Any]:
    reply = AIMessage("", tool_calls=[{**c, "type": "tool_call"} for c in calls])
    state: ResearchState = {"messages": [HumanMessage("q"), reply]}  # type: ignore[typeddict-item]
    if guard is not None:
        state["churn"] = guard
    return answer_tools(state)


def test_todos_alone_are_saved_and_the_plan_is_not_repeated_back() -> None:
    todos = [{"content": "Research alpha", "status": "pending"}]
    update = _answers([{"name": "write_todos", "args": {"todos": todos}, "id": "t1"}])
    assert update["todos"] == todos
    [answer] = update["messages"]
    assert answer.content == "Plan saved (1 todos)." and answer.tool_call_id == "t1"


def test_todos_beside_research_are_refused_and_the_research_left_to_run() -> None:
    todos = {"todos": [{"content": "Changed", "status": "completed"}]}
    calls = [
        {"name": "write_todos", "args": todos, "id": "t1"},
        {"name": "research", "args": {"topic": "alpha topic"}, "id": "r1"},
    ]
    update = _answers(calls)
    assert "todos" not in update, "the plan stays unchanged"
    [answer] = update["messages"]  # the valid research call is answered by its task
    assert answer.tool_call_id == "t1" and answer.status == "error"
    assert "call write_todos alone" in answer.content and "Example: write_todos(" in answer.content


def test_bad_arguments_unknown_tools_and_refused_calls_each_get_an_error_with_an_example() -> None:
    guard = {**churn.fresh(), "refused": {"r2": "repeated"}}
    calls = [
        {"name": "research", "args": {"subject": "x"}, "id": "r1"},
        {"name": "browse", "args": {"url": "x"}, "id": "u1"},
        {"name": "research", "args": {"topic": "again"}, "id": "r2"},
    ]
    update = _answers(calls, ChurnGuard(**guard))  # type: ignore[typeddict-item]
    answers = {m.tool_call_id: m for m in update["messages"]}
    assert set(answers) == {"r1", "u1", "r2"}
    assert all(m.status == "error" and "Example: " in m.content for m in answers.values())
    assert "topic" in answers["r1"].content
    assert "Unknown tool 'browse'. Tools: research, write_todos." in answers["u1"].content
