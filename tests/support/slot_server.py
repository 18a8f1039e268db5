"""One-slot and parallel model servers as coroutines on the event loop, and researchers
that call them through a `SlotGate` (the tests of `llm.slots`)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from deep_research.llm import slots
from deep_research.llm.slots import SlotGate

SECONDS_A_TOKEN = 0.008  # 25 tokens: 0.2 s, far above the loop's jitter


@dataclass
class Server:
    one_slot: bool
    order: list[str] = field(default_factory=list)  # the lanes, in the order served
    # (lane, when its answer started, when it ended), by the event loop's clock
    served: list[tuple[str, float, float]] = field(default_factory=list)
    in_flight: int = 0
    most_at_once: int = 0
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def answer(self, lane: str, tokens: int) -> None:
        async with self._lock if self.one_slot else contextlib.nullcontext():
            self.order.append(lane)
            started = asyncio.get_running_loop().time()
            self.in_flight += 1
            self.most_at_once = max(self.most_at_once, self.in_flight)
            await asyncio.sleep(tokens * SECONDS_A_TOKEN)
            self.in_flight -= 1
            self.served.append((lane, started, asyncio.get_running_loop().time()))


async def ask(
    gate: SlotGate, server: Server, lane: str, mode: slots.Mode = "auto", tokens: int = 25
) -> None:
    async with gate.turn(lane, mode) as call:
        await server.answer(lane, tokens)
        call.tokens = tokens


async def researcher(
    gate: SlotGate, server: Server, lane: str, calls: int = 3, mode: slots.Mode = "auto"
) -> None:
    """A researcher's turns: a call, its search step, the next call; then its lane ends."""
    for _ in range(calls):
        await ask(gate, server, lane, mode)
        await asyncio.sleep(0.03)  # the search step
    gate.lane_ended(lane)


async def run(server: Server, gate: SlotGate) -> None:
    """The orchestrator's two calls alone, then three researchers at once."""
    await ask(gate, server, slots.MAIN)
    await ask(gate, server, slots.MAIN)
    await asyncio.gather(*(researcher(gate, server, lane) for lane in "abc"))


def contiguous(order: list[str]) -> bool:
    """Each lane's calls come together: no lane comes back after another's."""
    seen: list[str] = []
    for lane in order:
        if seen and seen[-1] == lane:
            continue
        if lane in seen:
            return False
        seen.append(lane)
    return True


class Clock:
    """`slots.clock` at times the test sets: pairs judged exactly, however busy the machine."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now
