"""What the plan review's graph tests share: a planner that researches, writes todos and
revises them on feedback, and counts of what the scripted model was asked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from tests.support.graph_scripts import LINK, call, tool_results
from tests.support.scripted_model import ScriptedChatModel

QUESTION = {"messages": [{"role": "user", "content": "How do heat pumps do in the cold?"}]}
REVIEW = {"allow_clarification": False, "review_plan": True}


def planner(first: str) -> Callable[[list[BaseMessage]], AIMessage]:
    """First reply: research topics ("research") or a todo list ("todos"); feedback gets a
    revised todo list; saved todos are researched. (A replaced plan is dispatched in code.)"""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        last, turn = messages[-1], sum(isinstance(m, AIMessage) for m in messages)
        if isinstance(last, HumanMessage) and "asked for changes" in str(last.content):
            todo = {"content": f"revised plan {turn}", "status": "pending"}
            return AIMessage("", tool_calls=[call("write_todos", {"todos": [todo]}, f"w{turn}")])
        if isinstance(last, ToolMessage) and str(last.content).startswith("Plan saved"):
            return research_reply(_saved_todos(messages), turn)
        if not tool_results(messages) or isinstance(last, HumanMessage):  # a new question
            if first == "research":
                return research_reply(["alpha", "beta"], turn)
            todos = [{"content": t, "status": "pending"} for t in ("alpha", "beta")]
            return AIMessage("", tool_calls=[call("write_todos", {"todos": todos}, "w0")])
        links = LINK.findall("\n".join(str(m.content) for m in tool_results(messages)))
        return AIMessage("# Report\n\n" + " ".join(f"[c]({u})" for u in links))

    return reply


def _saved_todos(messages: list[BaseMessage]) -> list[str]:
    """The pending todos of the last write_todos call (the saved plan is not repeated back)."""
    calls = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    todos = [c["args"]["todos"] for c in calls if c["name"] == "write_todos"][-1]
    return [t["content"] for t in todos if t.get("status", "pending") == "pending"]


def research_reply(topics: list[str], turn: int) -> AIMessage:
    calls = [call("research", {"topic": t}, f"r{turn}-{i}") for i, t in enumerate(topics)]
    return AIMessage("", tool_calls=calls)


def plan_calls(model: ScriptedChatModel) -> int:
    return sum("research" in tools for _, tools in model.calls)


def researched(model: ScriptedChatModel) -> list[str]:
    return [str(m[1].content) for m, tools in model.calls if "web_search" in tools and len(m) == 2]


def assert_every_call_answered_once(messages: list[BaseMessage]) -> None:
    ids = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answers = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert sorted(ids) == sorted(answers), (ids, answers)


async def start(graph: Any, thread: str, context: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    config = {"configurable": {"thread_id": thread}}
    out = await graph.ainvoke(QUESTION, config, context=context)
    return config, out
