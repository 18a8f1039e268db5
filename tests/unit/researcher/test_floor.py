"""The researcher's floor: when it searches the topic, and how."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from deep_research.researcher import floor
from deep_research.state import ResearcherState, Share


def state(searches: int = 0, share: int = 2, searched: bool = False) -> ResearcherState:
    messages: list[Any] = [HumanMessage("topic")]
    if searched:
        messages.append(ToolMessage("results", tool_call_id="s"))
    return ResearcherState(  # type: ignore[typeddict-item]
        messages=messages, searches=searches, share=Share(searches=share), topic="topic"
    )


def test_due_only_before_any_search_with_none_asked_and_a_share_left() -> None:
    talk = AIMessage("no call")
    assert floor.due(state(), talk, usable_queries=0)
    assert not floor.due(state(), talk, usable_queries=1)
    assert not floor.due(state(searched=True), talk, usable_queries=0)
    assert not floor.due(state(share=0), talk, usable_queries=0)
    assert not floor.due(state(searches=2, share=2), talk, usable_queries=0)


def test_the_query_is_one_line_cut_at_a_word() -> None:
    assert floor.query_of("  heat\npumps\tin Norway ") == "heat pumps in Norway"
    long = floor.query_of("word " * 1_000)
    assert len(long) <= floor.QUERY_CHARS and long.endswith("word")


def test_the_search_call_is_added_beside_the_replys_own() -> None:
    reply = AIMessage("", tool_calls=[{"name": "x", "args": {}, "id": "a", "type": "tool_call"}])
    added = floor.search_reply(reply, "web_search", "heat pumps")
    assert [c["name"] for c in added.tool_calls] == ["x", "web_search"]
    assert added.tool_calls[1]["args"] == {"queries": ["heat pumps"]}
