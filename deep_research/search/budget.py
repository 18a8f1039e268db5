"""A research task's search quota, reserved in checkpointed state before any search is sent.

The run's cap is split into quotas when the orchestrator's reply asks for research
(`quotas`): research tasks of one turn run as sibling `Send` tasks that cannot see each
other's writes, so each gets its own share of what is left (cap minus searches counted in
state), and the shares never add up to more. The shares are counted in state as they are
handed out; each task gives back what it did not use when it ends, so a task that never
reports (dropped by a new question after a stopped run) keeps its share counted. Inside a
task, the `reserve` step counts the searches its next step may send and is checkpointed
before that step starts; the search step then sends at most that many (`Grant`) and gives
back what it did not send.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from deep_research.runtime import process
from deep_research.state import Reservation


def quotas(remaining: int, tasks: int) -> list[int]:
    """Split `remaining` searches among `tasks` as evenly as possible (earlier tasks first)."""
    share, extra = divmod(max(0, remaining), max(1, tasks))
    return [share + (1 if i < extra else 0) for i in range(tasks)]


def reserve(wanted: int, quota: int, counted: int) -> Reservation:
    """A reservation for up to `wanted` searches within what is left of `quota`."""
    granted = max(0, min(wanted, quota - counted))
    return Reservation(id=uuid.uuid4().hex, process=process.PROCESS_ID, granted=granted)


def may_send(reservation: Reservation | None) -> bool:
    """Whether a search step may send under `reservation`: only its first start in the
    process that made it. Otherwise the step ran before and died or was cancelled, so its
    searches may already have gone out: they stay counted and must be reserved again."""
    if reservation is None or reservation["process"] != process.PROCESS_ID:
        return False
    return process.start_reservation(reservation["id"])


@dataclass
class Grant:
    """What one search step may still send; cache hits and refused queries take nothing."""

    granted: int
    quota: int  # the research task's
    counted_before: int  # the task's searches before this step
    cap: int  # the run's
    sent: int = 0
    cost: int = 0  # µUSD the searches this step started cost (Tavily's credits; llm/prices.py)

    def take(self) -> bool:
        """Use one search; False once the step's reservation is spent."""
        if self.sent >= self.granted:
            return False
        self.sent += 1
        return True

    @property
    def unused(self) -> int:
        return self.granted - self.sent
