"""`llm.slots`: until a one-slot server is found out, a lane's second call waits for the
other lanes' calls that were in flight when its first one ended, so that the lane answered
last goes on from the prompt the server cached rather than behind a second call sent among
them. Turns are entered and left by hand here, at times `slots.clock` is told."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from deep_research.llm import slots
from deep_research.llm.slots import SlotGate
from tests.support.slot_server import Clock, Server, contiguous, run

Turn = contextlib.AbstractAsyncContextManager[object]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(slots, "clock", fake)
    return fake


async def enter(gate: SlotGate, lane: str, role: str = "researcher") -> Turn:
    """A call of `lane` let through the gate (25 reply tokens), not yet answered."""
    turn = gate.turn(lane, "auto", role)
    call = await turn.__aenter__()
    call.tokens = 25  # type: ignore[attr-defined]
    return turn


async def leave(turn: Turn) -> None:
    await turn.__aexit__(None, None, None)


async def settle() -> None:
    """Every callback the loop has ready runs."""
    for _ in range(10):
        await asyncio.sleep(0)


async def alone(gate: SlotGate, clock: Clock, lane: str = slots.MAIN) -> None:
    """A call that ran alone, 25 tokens in 0.4 s: the pace pairs are judged by."""
    turn = await enter(gate, lane, "orchestrator")
    clock.now += 0.4
    await leave(turn)
    clock.now += 1.0


async def test_the_lane_answered_last_in_the_first_round_goes_on_from_its_cached_prompt() -> None:
    """End to end, with a server that answers one call at a time (real coroutines)."""
    server, gate = Server(one_slot=True), SlotGate()
    await run(server, gate)
    assert gate.one_slot is True
    # a's second call, ready while b's and c's first calls were queued, waited for them
    # instead of queueing behind them: c, answered last, went on with its cached prompt.
    assert server.order[2:] == ["a", "b", "c", "c", "c", "a", "a", "b", "b"]
    assert contiguous(server.order[4:]), "c's first call and its next ones come together"


async def test_a_second_call_waits_for_the_calls_in_flight_when_its_first_ended(
    clock: Clock,
) -> None:
    """Nothing found out (no call ran alone to measure a pace by): a's second call waits
    for b's and c's first calls, and then goes."""
    gate = SlotGate()
    first = {lane: await enter(gate, lane) for lane in "abc"}
    clock.now += 0.1
    await leave(first["a"])
    second = asyncio.ensure_future(enter(gate, "a"))
    await settle()
    assert not second.done()
    await leave(first["b"])
    await settle()
    assert not second.done() and gate.one_slot is None, "c's first call is still out"
    await leave(first["c"])
    await leave(await asyncio.wait_for(second, 1))
    assert gate.one_slot is None and not gate._watchers


async def test_found_out_with_no_call_out_the_lane_just_answered_goes_on(clock: Clock) -> None:
    gate = SlotGate()
    await alone(gate, clock)
    a, b = await enter(gate, "a"), await enter(gate, "b")
    clock.now += 0.4
    await leave(a)
    waiting = asyncio.ensure_future(enter(gate, "a"))  # its search step was quick
    clock.now += 0.4  # b took its whole time after a: it was queued
    await leave(b)
    assert gate.one_slot is True and gate.holder == "b"
    await settle()
    assert not waiting.done(), "a waits for b's lane, whose prompt the server holds"
    await leave(await asyncio.wait_for(enter(gate, "b"), 1))
    gate.lane_ended("b")
    await leave(await asyncio.wait_for(waiting, 1))


async def test_found_out_from_the_main_line_s_calls_no_lane_is_held_for(clock: Clock) -> None:
    gate = SlotGate()
    await alone(gate, clock)
    one, two = await enter(gate, slots.MAIN, "report"), await enter(gate, slots.MAIN, "report")
    clock.now += 0.4
    await leave(one)
    clock.now += 0.4
    await leave(two)
    assert gate.one_slot is True and gate.holder is None
    await leave(await asyncio.wait_for(enter(gate, "a"), 1))


async def test_a_second_call_cancelled_while_it_waits_leaves_nothing_behind(
    clock: Clock,
) -> None:
    gate = SlotGate()
    a, b = await enter(gate, "a"), await enter(gate, "b")
    await leave(a)
    waiting = asyncio.ensure_future(enter(gate, "a"))
    await settle()
    waiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    assert not gate._watchers and "a" not in gate._ahead
    await leave(b)
    await leave(await asyncio.wait_for(enter(gate, "a"), 1))


async def test_a_lane_s_later_calls_and_the_main_line_never_wait_for_a_round(
    clock: Clock,
) -> None:
    """Only a lane's second call waits: its third, and the main line's calls, go at once
    while other calls are out and nothing is found out."""
    gate = SlotGate()
    a, b = await enter(gate, "a"), await enter(gate, "b")
    await leave(a)
    second = asyncio.ensure_future(enter(gate, "a"))
    await leave(b)
    a = await asyncio.wait_for(second, 1)
    c = await enter(gate, "c")  # a new lane's first call, out while a's second ends
    await leave(a)
    await leave(await asyncio.wait_for(enter(gate, "a"), 1))
    await leave(await asyncio.wait_for(enter(gate, slots.MAIN, "orchestrator"), 1))
    assert gate.one_slot is None
    await leave(c)


async def test_taking_turns_from_the_start_lets_a_waiting_second_call_go_to_its_turn(
    clock: Clock,
) -> None:
    """`on` (another role's setting) decides while a second call waits: it goes to the
    queue of turns at once rather than waiting for the round's calls to end."""
    gate = SlotGate()
    a, b = await enter(gate, "a"), await enter(gate, "b")
    await leave(a)
    waiting = asyncio.ensure_future(enter(gate, "a"))
    await settle()
    on = gate.turn("b", "on", "researcher")
    await on.__aenter__()  # b holds the server
    await settle()
    assert not waiting.done() and [lane for lane, _ in gate._waiting] == ["a"]
    await on.__aexit__(None, None, None)
    await leave(b)
    gate.lane_ended("b")
    await leave(await asyncio.wait_for(waiting, 1))


async def test_a_second_call_never_waits_for_another_kind_of_call(clock: Clock) -> None:
    """A server running many runs: another run's report, held for long, is out when a
    researcher's first call ends; its second call waits for the other researcher's first
    call only."""
    gate = SlotGate()
    report = await enter(gate, slots.MAIN, "orchestrator")
    a, b = await enter(gate, "a"), await enter(gate, "b")
    await leave(b)
    second = asyncio.ensure_future(enter(gate, "b"))
    await settle()
    assert not second.done(), "a's first call is still out"
    await leave(a)
    b = await asyncio.wait_for(second, 1)  # the report is still out
    c = await enter(gate, "c")
    await leave(c)  # its first ended with b's second call out: no wait for that either
    await leave(await asyncio.wait_for(enter(gate, "c"), 1))
    await leave(b)
    await leave(report)
