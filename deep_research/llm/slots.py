"""A model server that answers one request at a time, found out and then taken in turns.

mlx_lm.server, llama-cpp-python and a one-slot llama.cpp read one request at a time and keep
the last prompt cached. Parallel researchers then interleave there: each researcher's next
prompt (its growing conversation) follows another's and is read again from its start, so a
run reads far more prompt than when the researchers take turns. The server gains nothing
from the parallel requests, since they queue anyway.

Each model call passes a `SlotGate`, one per endpoint and model in this process. By default
(`one_slot_server=auto`, for the local providers) it lets every call through and watches:
a call that was in flight while another finished and then still took about its own full
time (its tokens at the pace of calls that ran alone) was queued behind it, so the server
answers one request at a time (one such pair when it is clear, two when less so, more
when pairs disagree; the same for many at once; how a pair is read: `llm/slot_pairs.py`).
From then on (or from the start, with `on`) the calls go in turns by *lane*: a researcher
keeps the server for its next call (its prompt continues the cached one) until it ends or
stays away `HOLD_SECONDS`, and the other lanes wait here, outside the call's deadline, as
they would have waited in the server's queue.

The researchers' first calls go out together, and are what it is found out from. Until it is,
a lane's second call waits for the other lanes' first calls of its role that were in flight
when its own first one ended (`_first_round`): on a one-slot server those are queued there,
and a second call sent among them would leave its lane's cached prompt behind another's, so
that lane reads its whole conversation again later (at K=3 in `python -m benchmarks
--profile laptop`, about 2,000 prompt tokens). Once they end it is usually known, and the
lane answered last goes on (its prompt is the one cached). On a server that answers
together, a lane's second call waits at most for those first calls (short: a topic each),
and not at all once a pair of calls has shown it; never for another kind of call (a report
that a server running many runs is writing for another).

What it changes is only the order the server answers in: no count, cap or result depends on
it, and a new process (a resume) finds it out again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from deep_research.llm.slot_pairs import LEAD, Call, pair_vote
from deep_research.runtime import progress

Mode = Literal["auto", "on", "off"]

# Which lane a model call belongs to: a research task's id inside it (researcher/task.py),
# else the run's main line (clarifier, orchestrator, the report's calls).
MAIN = "main"
LANE: ContextVar[str] = ContextVar("model_lane", default=MAIN)
# How long a lane that holds the server may stay away between its calls (its search step:
# the searches and the pages) before the next lane gets it.
HOLD_SECONDS = 20.0
KEPT_CALLS = 64
clock = time.monotonic  # when a call went out and came back (the tests' own, for exact times)
MOST_TOKENS = 10_000_000  # a count a server reports above this is not believed


@dataclass
class SlotGate:
    """The calls to one endpoint in this process: watched, and in turns once one slot."""

    endpoint: str = ""  # where the calls go (a public URL, never a key), for the user's line
    one_slot: bool | None = None  # None: not found out yet
    holder: str | None = None
    _in_flight: list[Call] = field(default_factory=list)
    _done: deque[Call] = field(default_factory=lambda: deque(maxlen=KEPT_CALLS))
    _waiting: deque[tuple[str, asyncio.Future[None]]] = field(default_factory=deque)
    _hold: asyncio.TimerHandle | None = None
    _votes: int = 0  # the pairs' votes so far: for one slot above 0, for many below
    _lanes: set[str] = field(default_factory=set)  # the lanes that have made a call
    # Before it is found out: other lanes' first calls (of its role) in flight when a lane's
    # first call ended.
    _ahead: dict[str, list[Call]] = field(default_factory=dict)
    _watchers: list[asyncio.Future[None]] = field(default_factory=list)

    @contextlib.asynccontextmanager
    async def turn(self, lane: str, mode: Mode, role: str = "") -> AsyncIterator[Call]:
        """One call's passage: waits for `lane`'s turn on a one-slot server, then times the
        call (the caller sets its `tokens` and `prompt`); `off` passes straight through,
        unwatched."""
        if mode == "off":
            yield Call(lane, clock(), role=role)
            return
        if mode == "on" and not self.one_slot:
            self.one_slot = True
            self._wake()
        if self.one_slot is None:
            await self._first_round(lane)
        if self.one_slot:
            await self._wait_for(lane)
        first = lane != MAIN and self.one_slot is None and lane not in self._lanes
        if first:
            self._lanes.add(lane)
        call = Call(lane, clock(), role=role, first=first)
        if self._in_flight:
            call.alone = False
            for other in self._in_flight:
                other.alone = False
        self._in_flight.append(call)
        try:
            yield call
        finally:
            call.done = clock()
            call.ended = True
            self._in_flight.remove(call)
            try:
                if mode == "auto" and self.one_slot is None and call.tokens:
                    try:
                        self._learn(call)
                    except (ArithmeticError, TypeError):  # a count no arithmetic takes
                        pass
            finally:
                if call.tokens:
                    self._done.append(call)
                if first and self.one_slot is None:
                    ahead = [
                        other
                        for other in self._in_flight
                        if other.first and other.role == role and other.lane != lane
                    ]
                    if ahead:
                        self._ahead[lane] = ahead
                self._wake()
                self._after(lane)

    def lane_ended(self, lane: str) -> None:
        """`lane` makes no more calls: the next lane waiting gets the server."""
        self._ahead.pop(lane, None)
        self._lanes.discard(lane)
        if self.holder == lane:
            self._release()

    async def _first_round(self, lane: str) -> None:
        """Until it is found out, `lane`'s second call waits for the other lanes' first calls
        of its role that were in flight when its own ended (see the module); at once when
        there were none."""
        ahead = self._ahead.pop(lane, [])
        while self.one_slot is None and any(not other.ended for other in ahead):
            watcher = asyncio.get_running_loop().create_future()
            self._watchers.append(watcher)
            try:
                await watcher
            finally:
                if watcher in self._watchers:
                    self._watchers.remove(watcher)

    def _wake(self) -> None:
        """A call ended: the second calls waiting in `_first_round` look again."""
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            if not watcher.done():
                watcher.set_result(None)

    async def _wait_for(self, lane: str) -> None:
        if self.holder is None:
            self.holder = lane
        if self.holder == lane:
            self._cancel_hold()
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append((lane, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            self._waiting = deque(w for w in self._waiting if w[1] is not waiter)
            # Handed the server already: its lane keeps it as after a call (others of the
            # lane may be going on), and lets go after the hold.
            self._after(lane)
            raise
        self._cancel_hold()

    def _after(self, lane: str) -> None:
        """A call of `lane` ended: a researcher keeps the server a while for its next call;
        the main line's next call comes only after the researchers it started, so it lets go."""
        if not self.one_slot or self.holder != lane:
            return
        if any(c.lane == lane for c in self._in_flight):
            return
        if lane == MAIN:
            self._release()
            return
        self._cancel_hold()
        self._hold = asyncio.get_running_loop().call_later(HOLD_SECONDS, self._release)

    def _release(self) -> None:
        self._cancel_hold()
        self.holder = None
        if not self._waiting:
            return
        self.holder = self._waiting[0][0]
        for _, waiter in [w for w in self._waiting if w[0] == self.holder]:
            if not waiter.done():
                waiter.set_result(None)
        self._waiting = deque(w for w in self._waiting if w[0] != self.holder)

    def _cancel_hold(self) -> None:
        if self._hold is not None:
            self._hold.cancel()
            self._hold = None

    def _learn(self, call: Call) -> None:
        """Counts what `call` and the call that finished before it say (llm/slot_pairs.py),
        and decides on a lead of `LEAD`."""
        self._votes += pair_vote(call, self._done, self._done[-1] if self._done else None)
        if self._votes >= LEAD:
            self.one_slot = True
            progress.emit("one_slot", endpoint=self.endpoint)
            # The lane whose call is now last in the server's queue goes on first, or with
            # none queued the lane just answered: its next prompt continues the cached one.
            latest = max(self._in_flight, key=lambda c: c.sent, default=call)
            self.holder = None if latest is call and call.lane == MAIN else latest.lane
        elif self._votes <= -LEAD:
            self.one_slot = False


# One gate per endpoint and model, for the last event loop to use it (its futures belong to
# that loop); a new loop (a new test, a new run of the CLI) gets new ones. The process runs
# one loop at a time. Losing one only changes the order of calls.
_gates: dict[tuple[str, str], tuple[asyncio.AbstractEventLoop, SlotGate]] = {}


def gate(endpoint: str, model: str = "") -> SlotGate:
    """The gate every call to `model` at `endpoint` in this event loop passes (two models
    behind one URL answer at their own paces)."""
    loop = asyncio.get_running_loop()
    owner, found = _gates.get((endpoint, model), (None, None))
    if owner is not loop or found is None:
        found = SlotGate(endpoint)
        _gates[(endpoint, model)] = (loop, found)
    return found


def serves_one_at_a_time(endpoint: str) -> bool:
    """Whether calls to `endpoint` (any model there) were found to (or set to) be answered
    one at a time, in this event loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # no loop: no call was made in one
        return False
    gates = list(_gates.items())
    return any(
        found.one_slot for (url, _), (owner, found) in gates if url == endpoint and owner is loop
    )


@contextlib.asynccontextmanager
async def in_lane(name: str) -> AsyncIterator[None]:
    """The model calls made inside are lane `name`'s (a research task's); when it ends, a
    server it held goes to the next lane waiting."""
    token = LANE.set(name)
    try:
        yield
    finally:
        LANE.reset(token)
        loop = asyncio.get_running_loop()  # another loop's gates are its own thread's
        for owner, found in list(_gates.values()):
            if owner is loop:
                found.lane_ended(name)
