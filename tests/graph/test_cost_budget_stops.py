"""The cost budget when a run stops: a call in flight when the run is stopped is counted on
resume, a run the budget stopped goes on with a bigger one, a report the budget stops after
a billed request counts it, and a follow-up spends from the thread's budget.

Priced as in test_cost_budget.py (tests/support/cost_budget.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deep_research.graph import builder
from deep_research.llm.spending import BudgetExceeded
from deep_research.runtime import process
from tests.support.cost_budget import (
    PRICED,
    THREE,
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
