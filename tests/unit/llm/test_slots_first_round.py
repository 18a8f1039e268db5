"""`llm.slots`: until a one-slot server is found out, a researcher's second call waits for
the first round (the researchers' first calls, sent together), so that the lane answered
last goes on from the prompt the server cached rather than behind a second call sent among
them; on a server that answers together it waits no longer than that round."""

from __future__ import annotations

import asyncio
import contextlib

from deep_research.llm import slots
from deep_research.llm.slots import SlotGate
from tests.support.slot_server import Server, ask, contiguous, researcher, run


async def test_the_lane_answered_last_in_the_first_round_goes_on_from_its_cached_prompt() -> None:
    server, gate = Server(one_slot=True), SlotGate()
    await run(server, gate)
    assert gate.one_slot is True
    # a's second call, ready while b's and c's first calls were queued, waited for them
    # instead of queueing behind them: c, answered last, went on with its cached prompt.
    assert server.order[2:] == ["a", "b", "c", "c", "c", "a", "a", "b", "b"]
    assert contiguous(server.order[4:]), "c's first call and its next ones come together"


async def test_on_a_server_that_answers_together_a_second_call_waits_for_that_round_only() -> None:
    """First calls of different lengths on a server that answers them together: the pair
    that ended first overlapped too little to say anything, so a's second call waits for
    the round (b's and c's first calls), and then goes out at once."""
    server, gate = Server(one_slot=False), SlotGate()
    await ask(gate, server, slots.MAIN)

    async def lane(name: str, first: int) -> None:
        await ask(gate, server, name, tokens=first)
        await asyncio.sleep(0.03)  # the search step
        await ask(gate, server, name)
        gate.lane_ended(name)

    await asyncio.gather(lane("a", 5), lane("b", 40), lane("c", 40))
    assert server.most_at_once == 3
    calls: dict[str, list[tuple[float, float]]] = {}
    for name, start, end in sorted(server.served, key=lambda served: served[1]):
        calls.setdefault(name, []).append((start, end))
    round_over = max(calls["b"][0][1], calls["c"][0][1])
    second = calls["a"][1][0]
    assert calls["a"][0][1] + 0.1 < round_over <= second < round_over + 0.1, calls


async def test_a_second_call_cancelled_while_it_waits_for_the_round_leaves_nothing_behind() -> None:
    server, gate = Server(one_slot=False), SlotGate()
    await ask(gate, server, slots.MAIN)
    others = [asyncio.ensure_future(ask(gate, server, name, tokens=40)) for name in "bc"]
    await asyncio.sleep(0.01)
    await ask(gate, server, "a", tokens=5)  # ends with b's and c's first calls in flight
    waiting = asyncio.ensure_future(ask(gate, server, "a"))
    await asyncio.sleep(0.05)
    assert server.order.count("a") == 1, "still waiting for the round"
    waiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    assert gate._watchers == []
    await asyncio.gather(*others)
    await asyncio.wait_for(ask(gate, server, "a"), 1)  # its next call goes: the round is over
    assert server.order.count("a") == 2


async def test_a_lane_s_later_calls_and_the_main_line_never_wait_for_a_round() -> None:
    """Only a researcher's second call waits, and only until it is found out."""
    server, gate = Server(one_slot=True), SlotGate()
    await run(server, gate)
    assert not gate._ahead and not gate._watchers
    await asyncio.wait_for(researcher(gate, server, "d", 2), 2)
    await asyncio.wait_for(ask(gate, server, slots.MAIN), 1)
