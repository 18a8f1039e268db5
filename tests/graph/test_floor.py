"""The floor: a model that never calls a tool still gets a researched, cited report, and a
model that researches never meets the floor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.citations.quoting import EVIDENCE_HEADING
from deep_research.graph import builder
from deep_research.llm.models import EmptyReplyError
from tests.support.graph_scripts import NO_CLARIFY, call, orchestrator_fanning_out, script_for
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

QUESTION = "How do heat pumps perform in cold climates?"


async def run_with_events(
    context: dict[str, Any], question: str = QUESTION
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "floor"}}
    events: list[dict[str, Any]] = []
    async for _, event in graph.astream(
        {"messages": [{"role": "user", "content": question}]},
        config,
        context=context,
        stream_mode="custom",
        subgraphs=True,
    ):
        events.append(event)
    return (await graph.aget_state(config)).values, events


def floor_acts(events: list[dict[str, Any]]) -> list[str]:
    return [e["acted"] for e in events if e.get("event") == "floor"]


def talker(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
    """A model whose template drops the tools: it only ever talks."""
    return AIMessage("Heat pumps are a good idea in many places.")


async def test_a_model_that_only_talks_gets_a_researched_report_of_quoted_evidence(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(talker)
    state, events = await run_with_events(NO_CLARIFY)
    assert scripted_search.queries == [QUESTION], "the floor searched the question itself"
    assert floor_acts(events) == ["dispatched", "searched", "quoted", "quoted"]
    assert state["status"] == "complete" and state["searches_used"] == 1
    report = state["final_report"]
    assert report.startswith("Heat pumps are a good idea"), "the model's words stay first"
    assert f"## {EVIDENCE_HEADING}" in report and "#:~:text=" in report
    assert state["citation_check"]["fragments_dropped"] == 0
    cited = state["citation_check"]["links_kept"]
    assert cited >= 1 and "## Sources" in report


async def test_a_question_with_parts_is_researched_part_by_part(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(talker)
    question = "Heat pumps in Norway:\n- running costs\n- lifetime\n- noise"
    state, events = await run_with_events({**NO_CLARIFY, "max_searches_per_run": 2}, question)
    # No more topics than searches left: each researcher can search.
    assert sorted(scripted_search.queries) == [
        "Heat pumps in Norway: lifetime",
        "Heat pumps in Norway: running costs",
    ]
    dispatched = [e for e in events if e.get("acted") == "dispatched"]
    assert len(dispatched) == 1 and "lifetime" in dispatched[0]["detail"]


async def test_a_model_that_says_nothing_still_gets_the_passages_read(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(lambda messages, tools: AIMessage(""))
    state, events = await run_with_events(NO_CLARIFY)
    assert scripted_search.queries == [QUESTION]
    assert floor_acts(events) == ["dispatched", "searched", "quoted", "quoted"]
    assert state["status"] == "complete" and not state.get("failures")
    assert state["final_report"].startswith(f"## {EVIDENCE_HEADING}")


async def test_a_plan_never_researched_is_researched_by_the_floor(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def planner(messages: list[BaseMessage]) -> AIMessage:
        if not any(isinstance(m, AIMessage) for m in messages):
            todos = {
                "todos": [{"content": "Heat pump efficiency below -20 C", "status": "pending"}]
            }
            return AIMessage("", tool_calls=[call("write_todos", todos, "t1")])
        return AIMessage("I am done planning.")  # then never researches

    use_script(script_for(planner, lambda messages: AIMessage("Nothing to add.")))
    state, events = await run_with_events(NO_CLARIFY)
    assert scripted_search.queries == ["Heat pump efficiency below -20 C"]
    assert floor_acts(events)[:2] == ["dispatched", "searched"]
    assert state["status"] == "complete"


async def test_no_searches_left_no_floor(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(talker)
    state, events = await run_with_events({**NO_CLARIFY, "max_searches_per_run": 0})
    assert scripted_search.queries == [] and floor_acts(events) == []
    assert state["status"] == "no_sources"


async def test_a_model_that_researches_never_meets_the_floor(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(orchestrator_fanning_out("alpha topic", "beta topic")))
    state, events = await run_with_events(NO_CLARIFY)
    assert floor_acts(events) == []
    assert sorted(scripted_search.queries) == ["alpha topic q0", "beta topic q0"]
    assert EVIDENCE_HEADING not in state["final_report"] and state["status"] == "complete"


async def test_a_researcher_with_a_junk_query_gets_its_topic_searched(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def junk(messages: list[BaseMessage]) -> AIMessage:
        if len(messages) == 2:  # system + topic: the first turn
            return AIMessage("", tool_calls=[call("web_search", {"queries": ["query1"]}, "j")])
        return AIMessage("Findings without a link.")

    use_script(script_for(orchestrator_fanning_out("alpha topic"), junk))
    state, events = await run_with_events(NO_CLARIFY)
    assert scripted_search.queries == ["alpha topic"], "the junk is refused, the topic searched"
    assert floor_acts(events)[:1] == ["searched"]


async def test_a_model_that_says_nothing_with_nothing_to_quote_stops_with_the_error(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(lambda messages, tools: AIMessage(""))
    with pytest.raises(EmptyReplyError):
        await run_with_events({**NO_CLARIFY, "max_searches_per_run": 0})
