"""Routing, caps, containment and clarification, with a scripted chat model."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.search.types import SearchResult
from tests.support.graph_scripts import (
    LINK,
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    researcher,
    run,
    script_for,
    tool_results,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch


async def test_research_calls_fan_out_and_findings_reach_the_report(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(orchestrator_fanning_out("topic alpha", "topic beta")))
    out = await run(NO_CLARIFY)
    cited = set(LINK.findall(out["final_report"]))
    assert any("topic-alpha" in u for u in cited) and any("topic-beta" in u for u in cited)
    assert cited <= {s["url"] for s in out["sources"]}
    assert out["messages"][-1].content == out["final_report"]


async def test_a_report_that_writes_about_think_tags_is_published_whole(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    mention = "Reasoning models wrap their thoughts in <think> and </think> tags."

    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        report = orchestrator_fanning_out("topic alpha")(messages)
        if report.tool_calls:
            return report
        return AIMessage(f"<think>plan the report</think>\n{report.content}\n\n{mention}")

    use_script(script_for(orchestrator))
    out = await run(NO_CLARIFY)
    assert out["final_report"].startswith("# Report") and mention in out["final_report"]
    assert "plan the report" not in out["final_report"]


async def test_relevance_threshold_drops_off_topic_results_by_minilm_similarity(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mixed = [
        SearchResult(
            "https://example.org/cold",
            "Cold-climate heat pumps at -25 C",
            "Field trials show air-source heat pumps keep a COP of 2 at -15 C.",
            score=0.1,
        ),
        SearchResult(
            "https://example.org/cake",
            "Chocolate cake recipe",
            "Mix flour, sugar and cocoa; bake for 35 minutes.",
            score=0.99,
        ),
        SearchResult(
            "https://example.org/nordic",
            "Heat pump performance in Nordic winters",
            "Heat pumps heat most Norwegian homes through the winter.",
        ),
        SearchResult(
            "https://example.org/football",
            "Premier League results",
            "Arsenal beat Chelsea 2-1 on Saturday.",
            score=0.95,
        ),
    ]

    async def search(query: str, max_results: int) -> list[SearchResult]:
        return mixed

    monkeypatch.setattr(scripted_search, "search", search)
    topic = "heat pump efficiency in cold climates"
    model = use_script(script_for(orchestrator_fanning_out(topic)))
    out = await run({**NO_CLARIFY, "relevance_threshold": 0.25, "fetch_top_n": 0})
    # The provider's own scores play no part: only the MiniLM similarity does.
    assert {s["url"] for s in out["sources"]} == {
        "https://example.org/cold",
        "https://example.org/nordic",
    }
    seen_by_researcher = [tool_results(m) for m, tools in model.calls if "web_search" in tools]
    told = str(seen_by_researcher[-1][-1].content)
    assert "2 results below the relevance threshold were dropped" in told
    assert "cake" not in told and "football" not in told


@pytest.mark.slow
async def test_researchers_per_turn_limit_queues_the_rest(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(orchestrator_fanning_out("topic a1", "topic b2", "topic c3")))
    scripted_search.hold_until(in_flight=2, timeout=0.3)  # never reached when the limit holds
    out = await run({**NO_CLARIFY, "max_researchers_per_turn": 1})
    assert scripted_search.max_in_flight == 1
    assert len(scripted_search.queries) == 3, "queued calls run later, none is rejected"
    assert len(tool_results(out["messages"])) == 3


async def test_parallel_researchers_overlap_when_allowed(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(orchestrator_fanning_out("topic a1", "topic b2", "topic c3")))
    scripted_search.hold_until(in_flight=3, timeout=10)
    await run({**NO_CLARIFY, "max_researchers_per_turn": 3})
    assert scripted_search.max_in_flight == 3


async def test_todos_alone_are_saved_and_mixed_with_research_are_refused(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    todo = {"todos": [{"content": "Research alpha", "status": "pending"}]}

    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        if turn == 0:
            return AIMessage("", tool_calls=[call("write_todos", todo, "t1")])
        if turn == 1:
            changed = {"todos": [{"content": "Changed", "status": "completed"}]}
            return AIMessage(
                "",
                tool_calls=[
                    call("write_todos", changed, "t2"),
                    call("research", {"topic": "alpha topic"}, "r1"),
                ],
            )
        return AIMessage("# Report\n\ndone")

    use_script(script_for(orchestrator))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "todos"}}
    await graph.ainvoke(
        {"messages": [{"role": "user", "content": "q"}]}, config, context=NO_CLARIFY
    )
    state = (await graph.aget_state(config)).values
    assert state["todos"] == [{"content": "Research alpha", "status": "pending"}]
    answers = {m.tool_call_id: m for m in tool_results(state["messages"])}
    assert "Plan saved" in str(answers["t1"].content)
    assert answers["t2"].status == "error" and "call write_todos alone" in str(
        answers["t2"].content
    )
    assert "Example: write_todos(" in str(answers["t2"].content)
    assert answers["r1"].status == "success", "the research in a mixed reply still runs"


async def test_invalid_and_unknown_calls_get_errors_with_examples(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        if not tool_results(messages):
            return AIMessage(
                "",
                tool_calls=[
                    call("research", {"subject": "x"}, "bad"),
                    call("browse", {"url": "x"}, "unknown"),
                ],
            )
        return AIMessage("# Report")

    use_script(script_for(orchestrator))
    out = await run(NO_CLARIFY)
    answers = {m.tool_call_id: str(m.content) for m in tool_results(out["messages"])}
    assert "Invalid arguments" in answers["bad"] and 'research({"topic"' in answers["bad"]
    assert "Unknown tool 'browse'" in answers["unknown"]
    # Nothing usable before any research: the floor researches the question (nodes/floor.py).
    assert scripted_search.queries == ["How do heat pumps perform in cold climates? q0"]


async def test_orchestrator_turn_cap_forces_a_report_without_tools(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def never_done(messages: list[BaseMessage]) -> AIMessage:
        n = len(tool_results(messages))
        return AIMessage("", tool_calls=[call("research", {"topic": f"topic {n}"}, f"r{n}")])

    model = use_script(script_for(never_done))
    # The orchestrator's own forced call (the report in sections has its own turn-cap test).
    context = {**NO_CLARIFY, "max_orchestrator_turns": 3, "report_in_sections": "off"}
    out = await run(context)
    assert out["final_report"].startswith("# Forced report")
    orchestrator_calls = [tools for _, tools in model.calls if "web_search" not in tools]
    assert orchestrator_calls[-1] == set(), "the last call offers no tools"
    assert len(scripted_search.queries) == 2


@pytest.mark.slow
async def test_researcher_turn_cap(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def searches_forever(messages: list[BaseMessage]) -> AIMessage:
        n = len(tool_results(messages))
        return AIMessage(
            "", tool_calls=[call("web_search", {"queries": [f"alpha detail {n}"]}, f"s{n}")]
        )

    use_script(script_for(orchestrator_fanning_out("alpha"), searches_forever))
    out = await run({**NO_CLARIFY, "max_researcher_turns": 3})
    assert len(scripted_search.queries) == 2
    assert "Wrap-up report without tools." in str(tool_results(out["messages"])[0].content)


@pytest.mark.slow
async def test_failed_researcher_keeps_siblings_and_names_the_gap(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def flaky(messages: list[BaseMessage]) -> AIMessage:
        if "doomed" in str(messages[1].content):
            raise RuntimeError("model server said 500")
        return researcher(messages)

    use_script(script_for(orchestrator_fanning_out("healthy topic", "doomed topic"), flaky))
    out = await run(NO_CLARIFY)
    assert out["failures"] == [
        {"topic": "doomed topic", "error": "RuntimeError: model server said 500"}
    ]
    assert "healthy-topic" in out["final_report"]
    assert "## Research gaps" in out["final_report"] and "doomed topic" in out["final_report"]


async def test_failed_search_is_reported_to_the_researcher(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(script_for(orchestrator_fanning_out("FAIL_SEARCH topic")))
    out = await run(NO_CLARIFY)
    assert out["failures"] == []
    assert len(scripted_search.queries) == 1
