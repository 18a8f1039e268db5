"""The search cap, under concurrency: searches sent never exceed it, and the count in state is
the number sent, however many researchers run at once and whatever a turn leaves unused.

The in-process scenarios use the scripted chat model and the scripted search provider; one
runs the real ChatOpenAI and Tavily client against the scripted servers. A crash, a stop and
a resume are in test_search_cap_resume.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.search import cache
from deep_research.search.budget import Grant, split
from deep_research.search.chain import SearchChain
from deep_research.search.fetch import PageFetcher
from deep_research.search.netguard import AddressPolicy
from deep_research.search.query import Searcher
from tests.support.brain import ResearchBrain
from tests.support.fakes.tavily_server import FakeTavilyServer
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    researcher,
    script_for,
)
from tests.support.live import QUESTION as RUN_INPUT
from tests.support.live import serve
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch
from tests.support.search_cap import THREE, Q


async def run_three_researchers(
    use_script: Callable[..., ScriptedChatModel], cap: int, **config: Any
) -> dict[str, Any]:
    use_script(script_for(orchestrator_fanning_out(*THREE), lambda m: researcher(m, queries=2)))
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "cap"}, **config}
    context = {**NO_CLARIFY, "max_searches_per_run": cap, **config.pop("context", {})}
    await graph.ainvoke(Q, run_config, context=context)
    return (await graph.aget_state(run_config)).values


def test_quotas_split_what_is_left_and_never_add_up_to_more() -> None:
    assert split(4, 3) == [2, 1, 1]
    assert split(2, 3) == [1, 1, 0]
    assert split(0, 2) == [0, 0] and split(-3, 2) == [0, 0]
    assert all(sum(split(left, n)) == left for left in range(30) for n in range(1, 9))


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="parallel"),
        pytest.param({"max_concurrency": 1}, id="max_concurrency=1"),
        pytest.param({"max_concurrency": 2}, id="max_concurrency=2"),
        pytest.param({"context": {"max_researchers_per_turn": 1}}, id="one-researcher-at-a-time"),
    ],
)
async def test_three_researchers_never_send_more_than_the_cap(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    config: dict[str, Any],
) -> None:
    state = await run_three_researchers(use_script, cap=4, **config)
    assert len(scripted_search.queries) == 4
    assert state["searches_used"] == 4


async def test_refused_searches_are_told_to_the_researcher(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(script_for(orchestrator_fanning_out(*THREE), lambda m: researcher(m, 2)))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "told"}}
    await graph.ainvoke(Q, config, context={**NO_CLARIFY, "max_searches_per_run": 4})
    told = [str(m[-1].content) for m, tools in model.calls if "web_search" in tools]
    assert sum("Search cap reached" in text for text in told) == 2, "2 of 6 queries refused"


@pytest.mark.slow
async def test_quota_a_turn_leaves_unused_comes_back_on_the_next_turn(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    def orchestrator(messages: list[BaseMessage]) -> AIMessage:
        turn = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        if turn == 0:  # two researchers, one query each, out of shares of 3
            calls = [call("research", {"topic": t}, f"r{t}") for t in ("one", "two")]
            return AIMessage("", tool_calls=calls)
        if turn == 1:  # one researcher wanting 4 queries: 6 - 2 = 4 are left for it
            return AIMessage("", tool_calls=[call("research", {"topic": "wide"}, "rwide")])
        return AIMessage("# Report")

    def research_step(messages: list[BaseMessage]) -> AIMessage:
        wide = "wide" in str(messages[1].content)
        return researcher(messages, queries=4 if wide else 1)

    use_script(script_for(orchestrator, research_step))
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "turns"}}
    await graph.ainvoke(Q, config, context={**NO_CLARIFY, "max_searches_per_run": 6})
    state = (await graph.aget_state(config)).values
    assert len(scripted_search.queries) == 6 and state["searches_used"] == 6
    assert sum("wide" in q for q in scripted_search.queries) == 4


async def test_a_researcher_without_quota_never_refuses_a_sibling_asking_the_same_query(
    scripted_search: ScriptedSearch,
) -> None:
    shared = cache.RunCache(asyncio.get_running_loop())

    def lookup(owner: str, granted: int, fetcher: PageFetcher) -> Searcher:
        grant = Grant(granted, share=granted, counted_before=0, cap=1)
        chain = SearchChain([scripted_search])
        return Searcher(chain, shared, grant, owner, fetcher, 3, threshold=0.0, fetch_top_n=0)

    async with PageFetcher(AddressPolicy.from_env(), timeout=5, max_chars=1000) as fetcher:
        spent, fresh = lookup("spent", 0, fetcher), lookup("fresh", 1, fetcher)
        refused, answered = await asyncio.gather(spent.run("same query"), fresh.run("same query"))
    assert "Search cap reached" in refused.error
    assert answered.findings and not answered.error
    assert scripted_search.queries == ["same query"]


# --- The real ChatOpenAI and Tavily client against the scripted servers ----------------


@pytest.mark.slow
async def test_three_researchers_over_the_real_clients_never_send_more_than_the_cap(
    monkeypatch: pytest.MonkeyPatch, tavily: FakeTavilyServer
) -> None:
    brain = ResearchBrain(
        topics=["topic one about pumps", "topic two about pumps", "topic three about pumps"],
        queries_per_search=2,
    )
    with serve(brain, monkeypatch):
        graph = builder.compile(checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "cap"}}
        await graph.ainvoke(
            RUN_INPUT, config, context={"allow_clarification": False, "max_searches_per_run": 3}
        )
        state = (await graph.aget_state(config)).values
    assert len(tavily.requests) == 3
    assert state["searches_used"] == 3
