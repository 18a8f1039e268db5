"""The research subgraph's nodes called directly: think, route and search."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.runtime import Runtime

from deep_research.config.settings import Context
from deep_research.researcher import graph as researcher
from deep_research.researcher.graph import route_researcher, think
from deep_research.runtime import process
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

RUNTIME = Runtime(context=Context(max_researcher_turns=3))


def web_search(call_id: str, **args: Any) -> ToolCall:
    return ToolCall(name="web_search", args=args, id=call_id)


def state(*messages: Any, **fields: Any) -> Any:
    base = {"topic": "T", "tool_call_id": "c", "dispatch_id": "d", "share": {"searches": 5}}
    return {**base, "searches": 0, "messages": [HumanMessage("T"), *messages], **fields}


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


def test_a_reply_with_calls_searches_one_without_ends_and_none_thinks_again() -> None:
    assert (
        route_researcher(state(AIMessage("", tool_calls=[web_search("s", queries=["q"])])))
        == "search"
    )
    assert route_researcher(state(AIMessage("The report."))) == "__end__"
    assert route_researcher(state()) == "think", "a turn stopped mid-call runs again"


async def test_search_answers_every_call_and_counts_what_it_sent(
    scripted_search: ScriptedSearch,
) -> None:
    calls = [
        web_search("a", queries=["heat pumps"]),
        web_search("b", queries=[]),
        ToolCall(name="fetch", args={}, id="c"),
    ]
    reply = AIMessage("", tool_calls=calls, id="r1")
    process.hand_over(("d", "c"), "r1")  # the turn that made it ran in this process
    update = await researcher.search(state(reply, searches=1), RUNTIME)
    ran, invalid, unknown = update["messages"]
    assert scripted_search.queries == ["heat pumps"]
    assert update["searches"] == 2
    assert ran.content.endswith("(3 searches left on this topic.)")
    assert invalid.status == unknown.status == "error"
    assert "web_search(" in invalid.content and "Unknown tool 'fetch'" in unknown.content


async def test_a_search_step_started_again_sends_nothing_and_counts_what_may_have_gone(
    scripted_search: ScriptedSearch,
) -> None:
    """No hand-over: the step ran before a stop. Outside a graph nothing is saved, so both
    queries may have been sent: counted, not sent, and the researcher told to ask again."""
    queries = ["heat pumps", "gas boilers", "district heating"]
    reply = AIMessage("", tool_calls=[web_search("a", queries=queries)], id="r2")
    update = await researcher.search(state(reply, share={"searches": 4}, searches=2), RUNTIME)
    assert scripted_search.queries == []
    assert update["searches"] == 4, "counted up to what the share left, never past it"
    assert "was under way when the run was stopped" in update["messages"][0].content
