"""The cost budget, in the search cap's scenarios: what the model calls cost never passes
`max_cost_usd`, under any concurrency, crash and resume; a budget that runs out mid-research
still gets a report (with a note saying why), and one too small for even that stops clearly.

Every role is priced as `openai:gpt-4o-mini` (genai-prices: $0.15/M in, $0.60/M out); the
scripted replies report their own `usage`, so each call's cost is known exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.llm.spending import BudgetExceeded, UnknownPriceError
from deep_research.runtime import process
from tests.support.cost_budget import (
    CALL_USD,
    PRICED,
    Crash,
    Q,
    always_researching,
    openai_key,  # noqa: F401  (autouse: the priced models' key)
    priced_script,
    run,
)
from tests.support.graph_scripts import (
    NO_CLARIFY,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch


async def test_without_a_budget_every_call_is_priced_and_counted(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    state, model = await run(use_script, None)
    usage = state["usage"]
    assert usage["calls"] == len(model.calls) == 8  # 2 orchestrator turns, 3 x 2 researcher
    assert usage["tokens_in"] == 10_000 * usage["calls"] and usage["estimated"] == 0
    assert usage["usd"] == pytest.approx(CALL_USD * usage["calls"])
    assert usage["by_role"]["researcher"]["calls"] == 6
    assert "Cost budget" not in state["final_report"]


@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="parallel"),
        pytest.param({"max_concurrency": 1}, id="max_concurrency=1"),
        pytest.param({"max_concurrency": 2}, id="max_concurrency=2"),
        pytest.param({"context": {"max_researchers_per_turn": 1}}, id="one-researcher-at-a-time"),
    ],
)
async def test_a_budget_that_runs_out_mid_research_still_gets_a_report_with_a_note(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    config: dict[str, Any],
) -> None:
    budget = 0.04
    config["context"] = {**config.get("context", {}), "max_orchestrator_turns": 20}
    state, model = await run(use_script, budget, always_researching, **config)
    assert state["usage"]["usd"] <= budget, state["usage"]
    assert state["cost_counted"] <= budget * 1_000_000
    assert state["usage"]["calls"] == len(model.calls)
    assert scripted_search.queries, "research ran before the budget ran out"
    report = state["final_report"]
    assert "## Cost budget" in report and "stopped at its cost budget" in report, report


async def test_a_budget_too_small_for_anything_stops_before_the_first_call(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    context = {**PRICED, "max_cost_usd": 0.000001}  # clarification on: it is skipped too
    with pytest.raises(BudgetExceeded, match="Not even the report fits"):
        await graph.ainvoke(Q, {"configurable": {"thread_id": "tiny"}}, context=context)
    assert model.calls == [], "no request was sent"
    assert scripted_search.queries == []


async def test_a_budget_with_a_model_of_unknown_price_is_a_clear_error_before_any_call(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    model = use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    unknown = {**PRICED, "orchestrator_model": "openai:no-such-model-xyz"}
    with pytest.raises(UnknownPriceError, match="no-such-model-xyz"):
        await graph.ainvoke(
            Q,
            {"configurable": {"thread_id": "u"}},
            context={**NO_CLARIFY, **unknown, "max_cost_usd": 1},
        )
    assert model.calls == []


async def test_an_unknown_price_without_a_budget_is_unknown_never_zero(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "u"}}
    context = {**NO_CLARIFY, **PRICED, "researcher_model": "openai:no-such-model-xyz"}
    await graph.ainvoke(Q, config, context=context)
    usage = (await graph.aget_state(config)).values["usage"]
    assert usage["usd"] is None and usage["by_role"]["researcher"]["usd"] is None
    assert usage["by_role"]["orchestrator"]["usd"] == pytest.approx(2 * CALL_USD)


async def test_local_models_cost_nothing_and_say_so(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "local"}}
    # The default `local:` models: free, so even a tiny budget holds every call.
    await graph.ainvoke(Q, config, context={**NO_CLARIFY, "max_cost_usd": 0.000001})
    state = (await graph.aget_state(config)).values
    assert state["usage"]["usd"] == 0.0 and state["usage"]["calls"] == 8
    assert "Cost budget" not in state["final_report"]


@pytest.mark.parametrize("new_process", [False, True], ids=["same-process", "new-process"])
async def test_a_run_that_crashed_mid_research_and_resumed_stays_within_the_budget(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
    new_process: bool,
) -> None:
    """The first search of `alpha` dies (as in test_search_cap_resume): its model calls so far are
    checkpointed in the researcher's state, and the resumed run still keeps the budget."""
    model = use_script(priced_script())
    real_search = scripted_search.search
    crashed: list[str] = []

    async def dying_search(query: str, max_results: int) -> Any:
        if query.startswith("alpha") and not crashed:
            crashed.append(query)
            raise Crash()
        return await real_search(query, max_results)

    monkeypatch.setattr(scripted_search, "search", dying_search)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "crash"}}
    context = {**NO_CLARIFY, **PRICED, "max_cost_usd": 0.04}
    with pytest.raises(Crash):
        await graph.ainvoke(Q, config, context=context)
    if new_process:
        monkeypatch.setattr(process, "_handed", type(process._handed)())
    await graph.ainvoke(None, config, context=context)
    state = (await graph.aget_state(config)).values
    assert crashed and state["usage"]["calls"] <= len(model.calls)
    assert state["usage"]["usd"] <= 0.04 and state["cost_counted"] <= 40_000
    assert state["final_report"]


@pytest.mark.slow
async def test_a_cloud_model_over_the_real_client_is_priced_from_the_usage_its_server_sent(
    monkeypatch: pytest.MonkeyPatch, tavily: Any
) -> None:
    from tests.support.brain import ResearchBrain
    from tests.support.live import research_run, serve

    brain = ResearchBrain(topics=["topic one about pumps"], queries_per_search=1)
    with serve(brain, monkeypatch) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # gpt-4o-mini, served locally
        out = await research_run({**PRICED, "max_cost_usd": 1.0})
    usage = out["usage"]
    assert usage["calls"] > 0 and usage["estimated"] == 0, "the server's `usage` was used"
    # Every Tavily search sent is one basic credit at `tavily_credit_usd` (0.008 by default);
    # searches are not model calls, so `calls` and the tokens stay the model's.
    searched = usage["by_role"]["search"]
    assert searched["calls"] >= 1 and searched["usd"] == pytest.approx(0.008 * searched["calls"])
    assert searched["tokens_in"] == searched["tokens_out"] == 0
    expected = (usage["tokens_in"] * 0.15 + usage["tokens_out"] * 0.6) / 1_000_000
    expected += searched["usd"]
    assert usage["usd"] == pytest.approx(expected, abs=1e-6 * usage["calls"])
    model_calls = sum(u["calls"] for role, u in usage["by_role"].items() if role != "search")
    assert model_calls == usage["calls"]


async def test_every_call_sends_a_model_call_event_that_adds_up_to_the_usage(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    """The live view adds these events up: they must say what state says, call by call."""
    use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "events"}}
    events = [
        event
        async for _, event in graph.astream(
            Q, config, context={**NO_CLARIFY, **PRICED}, stream_mode="custom", subgraphs=True
        )
    ]
    usage = (await graph.aget_state(config)).values["usage"]
    calls = [e for e in events if e["event"] == "model_call"]
    assert len(calls) == usage["calls"] == 8
    assert {e["role"] for e in calls} == {"orchestrator", "researcher"}
    assert all(e["model"] == "openai:gpt-4o-mini" and e["tokens_in"] == 10_000 for e in calls)
    assert sum(e["usd"] for e in calls) == pytest.approx(usage["usd"]) == 8 * CALL_USD
