"""The research subgraph's nodes called directly: think, route, reserve and search."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime

from deep_research.config.settings import Context
from deep_research.researcher import graph as researcher
from deep_research.researcher.graph import MAX_QUERIES_PER_CALL, reserve, route_researcher, think
from deep_research.search import budget
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

RUNTIME = Runtime(context=Context(max_researcher_turns=3))


def web_search(call_id: str, **args: Any) -> ToolCall:
    return ToolCall(name="web_search", args=args, id=call_id)


def state(*messages: Any, **fields: Any) -> Any:
    base = {"topic": "T", "tool_call_id": "c", "dispatch_id": "d", "quota": 5, "searches": 0}
    return {**base, "messages": [HumanMessage("T"), *messages], **fields}


async def test_think_offers_web_search_until_the_last_turn(use_script: Any) -> None:
    model: ScriptedChatModel = use_script(lambda messages, tools: AIMessage("ok"))
    searched = AIMessage("", tool_calls=[web_search("s", queries=["q"])])
    history = [searched, ToolMessage("results", tool_call_id="s")]
    assert (await think(state(*history, turns=1), RUNTIME))["turns"] == 2
    update = await think(state(*history, turns=2), RUNTIME)
    assert update["turns"] == 3
    (offered, tools), (last, no_tools) = model.calls
    assert tools == {"web_search"} and no_tools == set()
    # The wrap-up call shows the history as plain text: no tool calls without tools.
    assert not any(isinstance(m, ToolMessage) or getattr(m, "tool_calls", None) for m in last)
    assert any("Search results:\nresults" in str(m.content) for m in last)


@pytest.mark.parametrize("provider", ["library", "ddgs", "auto"])
async def test_the_researcher_is_told_what_it_searches(provider: str, use_script: Any) -> None:
    model: ScriptedChatModel = use_script(lambda messages, tools: AIMessage("ok"))
    context = Context(search_provider=provider, max_researcher_turns=3)
    await think(state(turns=0), Runtime(context=context))
    [(messages, _)] = model.calls
    system = str(messages[0].content)
    if provider == "library":
        assert "web researcher" not in system
        assert system.startswith("You are a researcher of the user's own documents")
    else:
        assert system.startswith("You are a web researcher.")


def test_a_reply_with_calls_reserves_and_one_without_ends() -> None:
    assert (
        route_researcher(state(AIMessage("", tool_calls=[web_search("s", queries=["q"])])))
        == "reserve"
    )
    assert route_researcher(state(AIMessage("The report."))) == "__end__"


def test_reserve_counts_valid_queries_within_the_quota_before_any_is_sent() -> None:
    calls = [
        web_search("a", queries=[f"q{i}" for i in range(MAX_QUERIES_PER_CALL + 3)]),
        web_search("b", queries="not a list"),
        ToolCall(name="other", args={}, id="c"),
    ]
    update = reserve(state(AIMessage("", tool_calls=calls), quota=10, searches=2))
    assert update["reservation"]["granted"] == MAX_QUERIES_PER_CALL
    assert update["searches"] == 2 + MAX_QUERIES_PER_CALL
    assert reserve(state(AIMessage("", tool_calls=calls), quota=3, searches=2))["searches"] == 3


async def test_a_step_without_its_own_reservation_goes_back_to_reserve() -> None:
    stale = {"id": "x", "process": "another process", "granted": 2}
    for reservation in (None, stale):
        command = await researcher.search(state(reservation=reservation), RUNTIME)
        assert command.goto == "reserve" and command.update is None


async def test_search_answers_every_call_and_gives_back_what_it_did_not_send(
    monkeypatch: pytest.MonkeyPatch, scripted_search: ScriptedSearch
) -> None:
    monkeypatch.setattr(researcher, "get_config", lambda: {"configurable": {"thread_id": "t"}})
    calls = [
        web_search("a", queries=["heat pumps"]),
        web_search("b", queries=[]),
        ToolCall(name="fetch", args={}, id="c"),
    ]
    granted = budget.reserve(3, quota=5, counted=0)
    command = await researcher.search(
        state(AIMessage("", tool_calls=calls), reservation=granted, searches=3), RUNTIME
    )
    update: dict[str, Any] = command.update  # type: ignore[assignment]
    ran, invalid, unknown = update["messages"]
    assert command.goto == "reserve_think" and scripted_search.queries == ["heat pumps"]
    assert update["searches"] == 1 and update["reservation"] is None
    assert ran.content.endswith("(4 searches left on this topic.)")
    assert invalid.status == unknown.status == "error"
    assert "web_search(" in invalid.content and "Unknown tool 'fetch'" in unknown.content
