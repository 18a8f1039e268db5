"""`llm.slots`: a one-slot server found out from the calls' own timing, then taken in turns.

The servers here are real coroutines on the event loop: one answers under a lock (one
request at a time, as mlx_lm.server), the other answers every request at once.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from deep_research.llm import slots
from deep_research.llm.slots import SlotGate
from tests.support import slot_server
from tests.support.slot_server import Clock, Server, ask, contiguous, researcher, run


async def test_a_one_slot_server_is_found_out_and_then_taken_in_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    said: list[dict[str, object]] = []
    monkeypatch.setattr(slots.progress, "emit", lambda event, **fields: said.append(fields))
    server, gate = Server(one_slot=True), SlotGate("http://localhost:8080/v1")
    await run(server, gate)
    assert gate.one_slot is True
    assert said == [{"endpoint": "http://localhost:8080/v1"}], "the user is told, once"
    first_round = server.order[2:5]
    assert sorted(first_round) == ["a", "b", "c"], "the first calls went before it was known"
    # After the first round each researcher keeps the server for its later calls, so each
    # continues the prompt the server cached.
    assert contiguous(server.order[5:]), server.order


async def test_without_the_gate_the_researchers_interleave_there() -> None:
    """What the turns prevent (the test above fails without them)."""
    server, gate = Server(one_slot=True), SlotGate()
    await ask(gate, server, slots.MAIN, "off")
    await asyncio.gather(*(researcher(gate, server, lane, mode="off") for lane in "abc"))
    assert not contiguous(server.order[1:])


async def test_a_server_that_answers_at_once_is_left_to_do_so() -> None:
    server, gate = Server(one_slot=False), SlotGate()
    await run(server, gate)
    assert gate.one_slot is False
    assert server.most_at_once == 3
    assert not slots.serves_one_at_a_time("http://nowhere")


async def test_on_takes_turns_from_the_first_call() -> None:
    server, gate = Server(one_slot=False), SlotGate()
    await asyncio.gather(*(researcher(gate, server, lane, 2, "on") for lane in "ab"))
    assert gate.one_slot is True
    assert server.most_at_once == 1 and contiguous(server.order), server.order


async def test_a_lane_that_stays_away_lets_the_next_one_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(slots, "HOLD_SECONDS", 0.05)
    server, gate = Server(one_slot=True), SlotGate()
    await ask(gate, server, "a", "on")  # a holds the server, and never ends its lane
    await asyncio.wait_for(ask(gate, server, "b", "on"), 2)
    assert gate.holder == "b"


async def test_the_main_line_lets_go_after_each_call() -> None:
    """The orchestrator's next call waits for the researchers it starts: holding the server
    for it would leave them waiting for nothing."""
    server, gate = Server(one_slot=True), SlotGate()
    await ask(gate, server, slots.MAIN, "on")
    assert gate.holder is None
    await asyncio.wait_for(ask(gate, server, "a", "on"), 1)


async def test_a_cancelled_wait_leaves_no_one_waiting_for_it() -> None:
    server, gate = Server(one_slot=True), SlotGate()
    await ask(gate, server, "a", "on")
    waiting = asyncio.ensure_future(ask(gate, server, "b", "on"))
    await asyncio.sleep(0.01)
    waiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    gate.lane_ended("a")
    assert gate.holder is None  # b no longer waits, so no lane is handed the server
    await asyncio.wait_for(ask(gate, server, "c", "on"), 1)
    assert server.order == ["a", "c"]


async def test_a_research_task_s_calls_are_its_lane_and_its_end_lets_go() -> None:
    server = Server(one_slot=True)
    gate = slots.gate("http://127.0.0.1:9/v1")
    async with slots.in_lane("call_a"):
        assert slots.LANE.get() == "call_a"
        await ask(gate, server, slots.LANE.get(), "on")
        assert gate.holder == "call_a"
    assert slots.LANE.get() == slots.MAIN and gate.holder is None
    assert slots.serves_one_at_a_time("http://127.0.0.1:9/v1")


async def test_a_server_quicker_than_the_loop_s_jitter_is_never_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A test's scripted server answers in milliseconds: what is measured there is mostly
    the event loop, so its calls say nothing either way."""
    monkeypatch.setattr(slot_server, "SECONDS_A_TOKEN", 0.0004)  # 25 tokens: 10 ms
    server, gate = Server(one_slot=True), SlotGate()
    await run(server, gate)
    assert gate.one_slot is None and gate.holder is None


async def _timed(gate: SlotGate, role: str, prompt: int, tokens: int, seconds: float) -> None:
    """A call to a server that answers every request at once, in `seconds`."""
    async with gate.turn(role, "auto", role) as call:
        await asyncio.sleep(seconds)
        call.tokens, call.prompt = tokens, prompt


async def test_long_prompts_read_in_parallel_are_not_taken_for_a_queue() -> None:
    """Calls that are mostly prompt reading take longer than their reply tokens foresee:
    they are not judged by the pace of short-prompt calls, nor by another role's."""
    gate = SlotGate()
    await _timed(gate, slots.MAIN, prompt=100, tokens=25, seconds=0.2)  # alone: its pace
    calls = []
    for _ in range(3):  # sent 0.15 s apart, each 1 s of prompt reading, all at once
        calls.append(asyncio.ensure_future(_timed(gate, "researcher", 5_000, 15, 1.0)))
        await asyncio.sleep(0.15)
    await asyncio.gather(*calls)
    assert gate.one_slot is None
    # The same timings with the calls' prompts unknown read as a queue (what is guarded):
    unguarded = SlotGate()
    await _timed(unguarded, slots.MAIN, prompt=0, tokens=25, seconds=0.2)
    calls = []
    for _ in range(3):
        calls.append(asyncio.ensure_future(_timed(unguarded, "researcher", 0, 15, 1.0)))
        await asyncio.sleep(0.15)
    await asyncio.gather(*calls)
    assert unguarded.one_slot is True


async def test_a_pair_of_calls_of_two_roles_says_nothing() -> None:
    gate = SlotGate()
    await _timed(gate, slots.MAIN, prompt=0, tokens=25, seconds=0.2)
    first = asyncio.ensure_future(_timed(gate, "orchestrator", 0, 25, 0.2))
    await asyncio.sleep(0.01)
    await _timed(gate, "researcher", 0, 25, 0.4)  # would read as queued behind the other
    await first
    assert gate.one_slot is None


async def test_a_call_is_judged_by_the_pace_of_calls_of_its_own_shape() -> None:
    """A short-prompt call ran fastest alone; a prompt-heavy one alone too. Prompt-heavy
    calls served together take the time the prompt-heavy one did, not the short one's."""
    gate = SlotGate()
    await _timed(gate, "clarifier", prompt=25, tokens=25, seconds=0.2)
    await _timed(gate, "orchestrator", prompt=750, tokens=25, seconds=1.0)
    calls = []
    for _ in range(3):  # served at once, 1 s each, sent 0.15 s apart
        calls.append(asyncio.ensure_future(_timed(gate, "researcher", 750, 25, 1.0)))
        await asyncio.sleep(0.15)
    await asyncio.gather(*calls)
    assert gate.one_slot is not True


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(slots, "clock", fake)
    return fake


async def _alone(gate: SlotGate, clock: Clock, seconds: float) -> None:
    """A call that ran alone, 25 tokens in `seconds`: the pace pairs are judged by."""
    async with gate.turn(slots.MAIN, "auto", "orchestrator") as call:
        clock.now += seconds
        call.tokens = 25
    clock.now += 1.0


async def _pair(gate: SlotGate, clock: Clock, first: float, after: float) -> None:
    """Two researchers' calls sent together: the first answered in `first` seconds, the
    second `after` seconds later."""
    one, two = gate.turn("a", "auto", "researcher"), gate.turn("b", "auto", "researcher")
    (await one.__aenter__()).tokens = 25
    clock.now += 0.01
    (await two.__aenter__()).tokens = 25
    clock.now += first - 0.01
    await one.__aexit__(None, None, None)
    clock.now += after
    await two.__aexit__(None, None, None)
    clock.now += 1.0


async def test_a_call_slowed_by_a_busy_machine_does_not_settle_it_as_many_at_once(
    clock: Clock,
) -> None:
    """A lone call the busy machine slowed (0.8 s for what takes 0.4) makes the next queued
    call look quick: that one pair decides nothing, and later clear ones find the queue."""
    gate = SlotGate()
    await _alone(gate, clock, 0.8)
    await _pair(gate, clock, 0.8, 0.2)  # its 0.2 s after the other: 0.25 of the slowed pace
    assert gate.one_slot is None
    await _alone(gate, clock, 0.4)  # the machine is quiet again
    await _pair(gate, clock, 0.4, 0.4)
    assert gate.one_slot is None, "the earlier pair's vote is outweighed, not ignored"
    await _pair(gate, clock, 0.4, 0.4)
    assert gate.one_slot is True


async def test_two_likely_pairs_decide_and_pairs_that_disagree_wait_for_more(
    clock: Clock,
) -> None:
    """Two pairs for many (0.2 of its time after the other) decide; one for many and then a
    stalled one that looks queued (its whole time after) decide nothing."""
    agreeing, disagreeing = SlotGate(), SlotGate()
    for gate in (agreeing, disagreeing):
        await _alone(gate, clock, 0.4)
        await _pair(gate, clock, 0.4, 0.08)
        assert gate.one_slot is None, "one likely pair decides nothing"
    await _pair(agreeing, clock, 0.4, 0.08)
    await _pair(disagreeing, clock, 0.4, 0.4)
    assert agreeing.one_slot is False and disagreeing.one_slot is None
