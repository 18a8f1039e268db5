"""A model step's reservation: its worst case, what a step may spend under it, and a step
that ran before (in this process or another) never spending it again."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from deep_research.llm import reservations
from deep_research.llm.models import RoleModel
from deep_research.llm.prices import price_of
from deep_research.llm.spending import BudgetExceeded, prompt_bound
from deep_research.runtime import process
from tests.support.scripted_model import ScriptedChatModel

USAGE = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}


def model(spec: str = "openai:gpt-4o-mini", max_tokens: int = 1000, empty: int = 0) -> RoleModel:
    """A role model whose first `empty` replies are empty (each gets a nudge)."""
    replies = iter([""] * empty + ["done"] * 5)

    def script(messages: list[BaseMessage], tools: set[str]) -> AIMessage:
        return AIMessage(next(replies), usage_metadata=USAGE)

    return RoleModel(
        ScriptedChatModel(script=script),
        "http://x",
        "researcher",
        spec,
        30.0,
        max_tokens=max_tokens,
        price=price_of(spec),
    )


def test_the_worst_case_is_the_request_and_its_nudge_at_the_completion_limit() -> None:
    messages = [HumanMessage("x" * 4_000)]
    bound = prompt_bound(messages, ())
    worst = reservations.worst_case(model(), messages)
    # $0.15/M in, $0.60/M out: the request and the (slightly longer) nudge, 1,000 out each.
    one = 0.15 * bound + 0.6 * 1_000
    assert 2 * one < worst < 2 * one + 0.15 * 200
    assert reservations.worst_case(model("local:any"), messages) == 0
    assert reservations.worst_case(model("openai:no-such-model-xyz"), messages) == 0


def test_a_reservation_is_at_most_what_is_left_and_none_without_a_budget() -> None:
    assert reservations.reserve(None, 10, 500) is None
    reserved = reservations.reserve(1_000, 700, 500)
    assert reserved is not None and reserved["micros"] == 300
    spent = reservations.reserve(1_000, 1_200, 500)
    assert spent is not None and spent["micros"] == 0


def test_a_reservation_is_usable_once_and_only_in_the_process_that_made_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mine = reservations.new(100)
    assert reservations.usable(mine) and not reservations.usable(mine)  # the step ran before
    theirs = reservations.new(100)
    monkeypatch.setattr(process, "PROCESS_ID", "another-process")
    assert not reservations.usable(theirs)
    assert not reservations.usable(reservations.UNUSABLE) and not reservations.usable(None)


def test_a_step_without_a_usable_reservation_under_a_budget_may_not_send() -> None:
    assert reservations.open_step(10_000, 500, None) is None
    used = reservations.new(300)
    assert reservations.usable(used)
    assert reservations.open_step(10_000, 500, used) is None
    assert reservations.declined(None) == reservations.UNUSABLE
    assert reservations.declined(used) is used
    assert reservations.pending(reservations.UNUSABLE) and not reservations.pending(None)


async def test_a_step_spends_within_its_reservation_and_settles_it_to_what_it_cost() -> None:
    messages = [HumanMessage("x" * 400)]
    role = model()
    worst = reservations.worst_case(role, messages)
    reservation = reservations.reserve(1_000_000, 5_000, worst)
    assert reservation is not None
    step = reservations.open_step(1_000_000, 5_000 + worst, reservation)
    assert step is not None and step.ledger.limit == 5_000 + worst
    await role.ask(messages, ledger=step.ledger)
    cost = 15 + 6  # 100 tokens in, 10 out
    settled = step.settled()
    assert settled["cost_counted"] == cost - worst and settled["call_reservation"] is None
    assert settled["usage"]["calls"] == 1
    assert step.cost_after(5_000 + worst) == 5_000 + cost


async def test_an_empty_reply_gets_its_nudge_within_the_reservation() -> None:
    messages = [HumanMessage("x" * 400)]
    role = model(empty=1)
    worst = reservations.worst_case(role, messages)
    step = reservations.open_step(10**6, worst, reservations.reserve(10**6, 0, worst))
    assert step is not None
    reply = await role.ask(messages, ledger=step.ledger)
    assert reply.text == "done" and step.ledger.usage["calls"] == 2


async def test_a_reservation_cut_to_what_is_left_refuses_a_call_that_does_not_fit() -> None:
    messages = [HumanMessage("x" * 400)]
    role = model()
    reservation = reservations.reserve(1_000, 900, reservations.worst_case(role, messages))
    assert reservation is not None and reservation["micros"] == 100
    step = reservations.open_step(1_000, 1_000, reservation)
    assert step is not None
    with pytest.raises(BudgetExceeded):
        await role.ask(messages, ledger=step.ledger)
    assert step.settled()["cost_counted"] == -100, "nothing was sent: it all goes back"


def test_without_a_budget_a_step_always_sends_and_gives_back_a_usable_reservation() -> None:
    step = reservations.open_step(None, 700, None)
    assert step is not None and step.ledger.limit is None and step.reserved == 0
    earlier = reservations.new(200)  # reserved when a budget was set
    step = reservations.open_step(None, 700, earlier)
    assert step is not None and step.reserved == 200
    # A reservation whose step already started stays counted (it may have been billed).
    step = reservations.open_step(None, 700, earlier)
    assert step is not None and step.reserved == 0


async def test_a_call_whose_reservation_the_checkpoint_never_shows_is_not_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under durability "async" a step waits for its reservation's checkpoint; one that
    never shows it (here: a reservation no step stored) fails the step before any call."""
    monkeypatch.setattr(reservations, "SAVE_POLLS", 2)
    monkeypatch.setattr(reservations, "SAVE_POLL_SECONDS", 0.0)

    class Empty(TypedDict):
        done: bool

    async def step(state: Empty) -> dict[str, bool]:
        await reservations.saved(reservations.new(5))  # never in any checkpoint
        return {"done": True}

    async def stored(state: Empty) -> dict[str, bool]:
        await reservations.saved(None)  # nothing reserved: nothing to wait for
        return {"done": False}

    builder = StateGraph(Empty)
    builder.add_node(stored)
    builder.add_node(step)
    builder.add_edge(START, "stored")
    builder.add_edge("stored", "step")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "unsaved"}}
    with pytest.raises(reservations.UnsavedReservationError, match="was not sent"):
        await graph.ainvoke({"done": False}, config, durability="async")
    # With "sync" the checkpoint is written before the step starts: nothing is waited for.
    done = await graph.ainvoke(
        {"done": False}, {"configurable": {"thread_id": "s"}}, durability="sync"
    )
    assert done == {"done": True}
