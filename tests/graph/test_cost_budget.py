"""The cost budget, in the search cap's scenarios: what the model calls cost never passes
`max_cost_usd`, under any concurrency, crash and resume; a budget that runs out mid-research
still gets a report (with a note saying why), and one too small for even that stops clearly.

Every role is priced as `openai:gpt-4o-mini` (genai-prices: $0.15/M in, $0.60/M out); the
scripted replies report their own `usage`, so each call's cost is known exactly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.llm.spending import BudgetExceeded, UnknownPriceError
from deep_research.runtime import process
from tests.support.graph_scripts import (
    NO_CLARIFY,
    call,
    orchestrator_fanning_out,
    researcher,
    script_for,
)
from tests.support.scripted_model import ScriptedChatModel
from tests.support.search import ScriptedSearch

Q = {"messages": [{"role": "user", "content": "q"}]}
THREE = ("alpha", "beta", "gamma")
PRICED = {f"{role}_model": "openai:gpt-4o-mini" for role in ("clarifier", "orchestrator")}
PRICED["researcher_model"] = "openai:gpt-4o-mini"
# Each scripted call reports 10,000 tokens in and 500 out: 1,500 + 300 = 1,800 µUSD.
CALL_USD = 0.0018


class Crash(BaseException):
    """Stands in for the process dying mid-call: nothing in the graph catches it."""


def reported(reply: AIMessage) -> AIMessage:
    reply.usage_metadata = {"input_tokens": 10_000, "output_tokens": 500, "total_tokens": 10_500}
    return reply


def priced_script(
    orchestrator: Callable[[list[BaseMessage]], AIMessage] | None = None,
) -> Callable[[list[BaseMessage], set[str]], AIMessage]:
    script = script_for(orchestrator or orchestrator_fanning_out(*THREE), researcher)
    return lambda messages, tools: reported(script(messages, tools))


@pytest.fixture(autouse=True)
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")  # the scripted model answers


def always_researching(messages: list[BaseMessage]) -> AIMessage:
    """An orchestrator that asks for three more topics every turn, never writing the report."""
    turn = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    calls = [call("research", {"topic": f"{t} {turn}"}, f"r{turn}{t}") for t in THREE]
    return AIMessage("", tool_calls=calls)


async def run(
    use_script: Callable[..., ScriptedChatModel],
    budget: float | None,
    orchestrator: Callable[[list[BaseMessage]], AIMessage] | None = None,
    **config: Any,
) -> tuple[dict[str, Any], ScriptedChatModel]:
    model = use_script(priced_script(orchestrator))
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "cost"}, **config}
    context = {**NO_CLARIFY, **PRICED, "max_cost_usd": budget, **config.pop("context", {})}
    await graph.ainvoke(Q, run_config, context=context)
    return (await graph.aget_state(run_config)).values, model


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
    """The first search of `alpha` dies (as in test_search_cap): its model calls so far are
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


# --- A call in flight when the run stops ------------------------------------------------
#
# The run is stopped (its task cancelled, as Ctrl-C stops the CLI) while one request waits
# for its reply. That request reached the "provider" (the scripted model logs every request
# it gets), so it may be billed: the resumed run must count it, and what every request
# sent could cost (1,800 µUSD each, as each reply reports) stays within the budget.


def in_flight(messages: list[BaseMessage], tools: set[str]) -> str | None:
    """Which call to stop in: the clarifier's, the second orchestrator turn's (after
    research came back) or alpha's report turn (after its search)."""
    if not tools:
        return "clarifier" if "intake step" in str(messages[0].content) else None
    if "research" in tools:
        return "orchestrator" if any(isinstance(m, ToolMessage) for m in messages) else None
    topic = str(messages[1].content)
    reporting = any(isinstance(m, ToolMessage) for m in messages)
    return "researcher" if topic.startswith("alpha") and reporting else None


@pytest.mark.parametrize("where", ["clarifier", "orchestrator", "researcher"])
@pytest.mark.parametrize(
    "config",
    [
        pytest.param({}, id="parallel"),
        pytest.param({"max_concurrency": 1}, id="max_concurrency=1"),
        pytest.param({"context": {"max_researchers_per_turn": 1}}, id="one-researcher-at-a-time"),
    ],
)
@pytest.mark.parametrize("new_process", [False, True], ids=["same-process", "new-process"])
async def test_a_call_in_flight_when_the_run_stops_is_counted_and_the_resume_stays_within(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    config: dict[str, Any],
    new_process: bool,
) -> None:
    budget = 0.04
    model = use_script(priced_script(always_researching))
    waiting = asyncio.Event()
    answer = ScriptedChatModel._agenerate

    async def hanging(
        self: ScriptedChatModel, messages: list[BaseMessage], *a: Any, **kw: Any
    ) -> Any:
        names = set(kw.get("tool_names", []))
        if not waiting.is_set() and in_flight(messages, names) == where:
            self.calls.append((list(messages), names))  # sent; its reply never comes
            waiting.set()
            await asyncio.Event().wait()
        return await answer(self, messages, *a, **kw)

    monkeypatch.setattr(ScriptedChatModel, "_agenerate", hanging)
    graph = builder.compile(checkpointer=InMemorySaver())
    run_config = {"configurable": {"thread_id": "in-flight"}, **config}
    context = {
        **PRICED,
        "allow_clarification": where == "clarifier",
        "max_cost_usd": budget,
        "max_orchestrator_turns": 20,
        **config.pop("context", {}),
    }
    # "sync", as the CLI runs it: each reservation is saved before its call is sent.
    running = asyncio.create_task(graph.ainvoke(Q, run_config, context=context, durability="sync"))
    await asyncio.wait_for(waiting.wait(), 60)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    if new_process:
        monkeypatch.setattr(process, "_handed", type(process._handed)())
    await graph.ainvoke(None, run_config, context=context, durability="sync")
    state = (await graph.aget_state(run_config)).values
    sent = len(model.calls)  # every request the provider got, the stopped one included
    # Replies the run kept; the stop may also have cut off siblings whose replies had come.
    assert state["usage"]["calls"] <= sent - 1
    # The stopped call is counted (at its reservation, at least what it could have cost),
    # so what the provider may have billed never passes the budget.
    # (The stopped call counts at its worst case: for the clarifier, at its 1,024-token
    # limit, ~1,795 µUSD, a hair under the 1,800 the scripted replies claim, which no real
    # provider could bill for a ~2,900-byte request.)
    assert state["cost_counted"] >= 1_800 * (sent - 1) + 1_750, (state["cost_counted"], sent)
    assert state["cost_counted"] <= budget * 1_000_000
    assert state["usage"]["usd"] + 0.0018 <= budget
    assert state["final_report"] and "## Cost budget" in state["final_report"]


async def test_a_modest_budget_on_a_priced_model_researches(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    """$0.30 on gpt-4.1 (every role): each call is reserved at its role's completion limit
    and the report keeps back what a report with a quarter of the findings costs, so the
    researchers search, read and report instead of ending at once with nothing."""
    use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "modest"}}
    gpt41 = {
        f"{role}_model": "openai:gpt-4.1" for role in ("clarifier", "orchestrator", "researcher")
    }
    await graph.ainvoke(Q, config, context={**NO_CLARIFY, **gpt41, "max_cost_usd": 0.3})
    state = (await graph.aget_state(config)).values
    assert len(scripted_search.queries) == 3, "each of the three researchers searched"
    assert {s["found_by"] for s in state["sources"]} == set(THREE)
    assert state["status"] == "complete" and state["cost_counted"] <= 300_000


async def test_a_run_the_budget_stopped_goes_on_when_resumed_with_a_bigger_one(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    """$0.01 on gpt-4.1 cannot pay for planning nor the report: the run stops with the
    budget's error. Resumed with $0.30, it plans, researches and writes a cited report
    whose note is not the old budget's."""
    use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "raised"}}
    gpt41 = {
        f"{role}_model": "openai:gpt-4.1" for role in ("clarifier", "orchestrator", "researcher")
    }
    with pytest.raises(BudgetExceeded, match="Not even the report fits"):
        await graph.ainvoke(Q, config, context={**NO_CLARIFY, **gpt41, "max_cost_usd": 0.01})
    assert scripted_search.queries == []
    await graph.ainvoke(None, config, context={**NO_CLARIFY, **gpt41, "max_cost_usd": 0.3})
    state = (await graph.aget_state(config)).values
    assert scripted_search.queries, "the resumed run researched"
    assert state["status"] == "complete"
    assert "$0.0100" not in state["final_report"] and not state.get("budget_note")


async def test_a_report_the_budget_stops_after_a_billed_request_counts_that_request(
    use_script: Callable[..., ScriptedChatModel],
    scripted_search: ScriptedSearch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The report's first request came back empty (billed) and its nudge did not fit: the
    turn counts what was billed before the run stops, so a resume starts from it."""
    from deep_research.llm.spending import Ledger
    from deep_research.nodes import report_writer
    from deep_research.state import NO_USAGE

    counted_at_start: list[int] = []

    async def billed_then_refused(
        model: Any, findings: Any, ledger: Ledger, wishes: str
    ) -> AIMessage:
        counted_at_start.append(ledger.counted)
        if len(counted_at_start) == 1:
            ledger.absorb(NO_USAGE, 5_000)  # the empty reply, billed
        raise BudgetExceeded("the nudge does not fit")

    monkeypatch.setattr(report_writer, "write_report", billed_then_refused)
    with pytest.raises(BudgetExceeded):
        await run(use_script, 1.0, context={"max_orchestrator_turns": 1})
    assert len(counted_at_start) == 2, "the turn ran again with the billed request counted"
    assert counted_at_start[1] == counted_at_start[0] + 5_000


async def test_a_follow_up_spends_from_the_threads_budget_not_a_fresh_one(
    use_script: Callable[..., ScriptedChatModel], scripted_search: ScriptedSearch
) -> None:
    """The budget is the thread's, as the search cap is: a follow-up asked with $0.13 after
    the first question spent $0.12 has $0.01 left and stops before any call, where the same
    question and budget on a fresh thread runs."""
    model = use_script(priced_script())
    graph = builder.compile(checkpointer=InMemorySaver())
    gpt41 = {
        f"{role}_model": "openai:gpt-4.1" for role in ("clarifier", "orchestrator", "researcher")
    }
    thread = {"configurable": {"thread_id": "asked-twice"}}
    await graph.ainvoke(Q, thread, context={**NO_CLARIFY, **gpt41, "max_cost_usd": 0.3})
    spent = (await graph.aget_state(thread)).values["cost_counted"]
    assert spent == 120_000, spent
    follow_up = {"messages": [{"role": "user", "content": "And what do they cost?"}]}
    context = {**NO_CLARIFY, **gpt41, "max_cost_usd": 0.13}
    calls = len(model.calls)
    with pytest.raises(BudgetExceeded, match=r"\$0\.0100 of the budget is left"):
        await graph.ainvoke(follow_up, thread, context=context)
    assert len(model.calls) == calls, "no request was sent"
    assert (await graph.aget_state(thread)).values["cost_counted"] == spent
    fresh = {"configurable": {"thread_id": "asked-once"}}
    await graph.ainvoke(follow_up, fresh, context=context)
    assert len(model.calls) > calls, "a fresh thread with that budget runs"
    assert (await graph.aget_state(fresh)).values["cost_counted"] <= 130_000
