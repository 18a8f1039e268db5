"""A research task's share of the search cap, and what one search step may send of it.

The run's cap is split into shares when the orchestrator's reply asks for research
(`quotas`): research tasks of one turn run as sibling `Send` tasks that cannot see each
other's writes, so each gets its own share of what is left (cap minus searches counted in
state), and the shares never add up to more. The shares are counted in state as they are
handed out; each task gives back what it did not use when it ends, so a task that never
reports (dropped by a new question after a stopped run) keeps its share counted.

Inside a task, a search step may send what is left of its share (`Grant`), counted in the
task's checkpointed state before the step starts. A step that runs again after a stop sends
nothing new: its searches that have a saved answer are reused (runtime/durable.py), and the
others may have been sent before the stop, so they are counted as sent (`lost`) and the
researcher is told to ask again, from a fresh step.
"""

from __future__ import annotations

from dataclasses import dataclass


def quotas(remaining: int, tasks: int) -> list[int]:
    """Split `remaining` searches among `tasks` as evenly as possible (earlier tasks first)."""
    share, extra = divmod(max(0, remaining), max(1, tasks))
    return [share + (1 if i < extra else 0) for i in range(tasks)]


@dataclass
class Grant:
    """What one search step may send, and what its searches came to.

    `take` bounds the step's sending as its searches start; `sent` and `lost` are read from
    its searches' stored answers, so a step that runs again after a stop counts the
    searches its earlier start sent, though it does not send them again."""

    granted: int
    quota: int  # the research task's
    counted_before: int  # the task's searches before this step
    cap: int  # the run's
    fresh: bool = True  # False: the step runs again after a stop, and sends nothing new
    taken: int = 0  # searches this start of the step let go out
    sent: int = 0  # searches sent for this step, by this start or an earlier one
    lost: int = 0  # searches in flight at a stop: counted as sent, never answered
    cost: int = 0  # µUSD the searches this step started cost (Tavily's credits; llm/prices.py)

    def take(self) -> bool:
        """Let one search go out; False once the step's share is spent."""
        if self.taken >= self.granted:
            return False
        self.taken += 1
        return True

    def answered(self, started: bool) -> None:
        """Count a search's stored answer: sent by this step, or shared or cached (free)."""
        self.sent += started

    def lose(self) -> None:
        """Count a search that may have gone out before a stop."""
        self.lost += 1

    @property
    def used(self) -> int:
        """Searches counted for the step: never more than it was granted."""
        return min(self.granted, self.sent + self.lost)

    @property
    def unused(self) -> int:
        return self.granted - self.used
