"""A run across outages, crashes and follow-up questions; tool-call bookkeeping."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.llm import models
from deep_research.llm.chat_models import Role
from deep_research.llm.models import ModelEndpointError
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    researcher,
    script_for,
    tool_results,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

QUESTION = {"messages": [{"role": "user", "content": "How do heat pumps perform?"}]}


def connection_error() -> openai.APIConnectionError:
    return openai.APIConnectionError(request=httpx.Request("POST", "http://localhost:8080/v1"))


async def test_model_outage_stops_the_run_and_resume_finishes_the_research(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    down = {"beta": True}

    def research(messages: list[BaseMessage]) -> AIMessage:
        if "beta" in str(messages[1].content) and down["beta"]:
            raise connection_error()
        results = tool_results(messages)
        if results and "was under way when the run was stopped" in str(results[-1].content):
            # alpha's searches went out as the outage stopped the run, unanswered: they are
            # counted, not sent again unasked, and the researcher is told to search again.
            return researcher(messages[:2])
        return researcher(messages)

    use_script(script_for(orchestrator_fanning_out("alpha topic", "beta topic"), research))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "outage"}}
    with pytest.raises(ModelEndpointError, match="Cannot reach the model server"):
        await graph.ainvoke(QUESTION, config, context=NO_CLARIFY)
    down["beta"] = False
    out = await graph.ainvoke(None, config, context=NO_CLARIFY)
    assert out["failures"] == [], "an outage is not a research gap"
    assert "Research gaps" not in out["final_report"]
    assert "beta-topic" in out["final_report"] and "alpha-topic" in out["final_report"]


class Crash(BaseException):
    """Stands in for the process dying: nothing in the graph catches it."""


async def test_searches_before_a_crash_count_when_the_resumed_researcher_fails(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    phase = {"now": "crash"}

    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        if turn < 2:
            topic = ["alpha topic", "beta topic"][turn]
            return AIMessage("", tool_calls=[call("research", {"topic": topic}, f"r{turn}")])
        return AIMessage("# Report")

    use_script(script_for(orchestrator, lambda m: researcher(m, queries=2)))
    real = models.role_model

    @dataclass
    class Dying:
        inner: models.RoleModel

        async def ask(
            self, messages: list[BaseMessage], tools: Any = (), ledger: Any = None
        ) -> AIMessage:
            if tool_results(messages) and str(messages[1].content) == "alpha topic":
                if phase["now"] == "crash":
                    raise Crash()
                raise RuntimeError("model fell over")
            return await self.inner.ask(messages, tools, ledger)

    def wrapped(context: Any, role: Role, **kwargs: Any) -> Any:
        model = real(context, role, **kwargs)
        return Dying(model) if role == "researcher" else model

    monkeypatch.setattr(models, "role_model", wrapped)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "crash"}}
    context = {**NO_CLARIFY, "max_searches_per_run": 3}
    with pytest.raises(Crash):
        await graph.ainvoke(QUESTION, config, context=context)
    phase["now"] = "fail"
    await graph.ainvoke(None, config, context=context)
    state = (await graph.aget_state(config)).values
    assert [f["topic"] for f in state["failures"]] == ["alpha topic"]
    assert len(scripted_search.queries) == 3, "2 before the crash + 1 left under the cap of 3"
    assert state["searches_used"] == 3


async def test_a_follow_up_question_gets_its_own_turns_plan_and_gaps(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    asked = Counter[str]()

    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        last_question = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        question = str(messages[last_question].content)
        if not tool_results(messages[last_question:]):
            asked[question] += 1
            topic = f"doomed {question}" if question.startswith("First") else question
            return AIMessage("", tool_calls=[call("research", {"topic": topic}, f"r{question}")])
        return AIMessage(f"# Report on {question}")

    def research(messages: list[BaseMessage]) -> AIMessage:
        if "doomed" in str(messages[1].content):
            raise RuntimeError("bad luck")
        return researcher(messages)

    use_script(script_for(orchestrator, research))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "follow-up"}}
    context = {**NO_CLARIFY, "max_orchestrator_turns": 3}
    first = await graph.ainvoke(
        {"messages": [{"role": "user", "content": "First question"}]}, config, context=context
    )
    assert "Research gaps" in first["final_report"]
    second = await graph.ainvoke(
        {"messages": [{"role": "user", "content": "Second question"}]}, config, context=context
    )
    assert asked == {"First question": 1, "Second question": 1}
    assert second["final_report"].startswith("# Report on Second question")
    assert second["failures"] == [] and "Research gaps" not in second["final_report"]


async def test_calls_without_ids_each_get_their_own_answer(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        if tool_results(messages):
            return AIMessage("# Report")
        calls = [call("research", {"topic": t}, "") for t in ("alpha topic", "beta topic")]
        calls.append(call("research", {"topic": "gamma topic"}, "dup"))
        calls.append(call("browse", {"url": "x"}, "dup"))
        return AIMessage("", tool_calls=calls)

    use_script(script_for(orchestrator))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "ids"}}
    await graph.ainvoke(QUESTION, config, context=NO_CLARIFY)
    messages = (await graph.aget_state(config)).values["messages"]
    [asking] = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    ids = [c["id"] for c in asking.tool_calls]
    assert len(set(ids)) == 4 and all(ids)
    answered = Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))
    assert answered == Counter(ids), "exactly one tool message per call"
    assert len(scripted_search.queries) == 3


async def test_todos_with_only_invalid_research_are_applied(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        if tool_results(messages):
            return AIMessage("# Report")
        todos = {"todos": [{"content": "Plan", "status": "pending"}]}
        return AIMessage(
            "",
            tool_calls=[
                call("write_todos", todos, "t"),
                call("research", {"topic": "    "}, "blank"),
            ],
        )

    use_script(script_for(orchestrator))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "mix"}}
    await graph.ainvoke(QUESTION, config, context=NO_CLARIFY)
    state = (await graph.aget_state(config)).values
    answers = {m.tool_call_id: m for m in tool_results(state["messages"])}
    assert "Plan saved" in str(answers["t"].content), "no research ran, so the plan applies"
    assert answers["blank"].status == "error"
    # A blank topic is never researched; the plan is, by the floor, when the next turn
    # writes a report before any research was done (nodes/floor.py), and is ticked off.
    assert scripted_search.queries == ["Plan q0"]
    assert state["todos"] == [{"content": "Plan", "status": "completed"}]
