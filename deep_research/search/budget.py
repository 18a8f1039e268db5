"""A research task's share of the search cap, and what one search step may send of it.

The run's cap is split into shares when the orchestrator's reply asks for research
(`split`): research tasks of one turn run as sibling `Send` tasks that cannot see each
other's writes, so each gets its own share of what is left (cap minus searches counted in
state), and the shares never add up to more. The shares are counted in state as they are
handed out; each task gives back what it did not use when it ends, so a task that never
reports (dropped by a new question after a stopped run) keeps its share counted.

Inside a task, a search step may send what is left of its share (`Grant`), counted in the
task's checkpointed state before the step starts. A step that runs again after a stop
reuses its searches that have a saved answer (runtime/durable.py). The others may have been
sent before the stop: when the earlier start was in this process, it noted each search
before sending it, so exactly those are counted as sent (`lost`) and the rest go out now;
after a start in another process, all of them are counted and none is sent, and the
researcher is told to search again.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def split(remaining: int, tasks: int) -> list[int]:
    """Split `remaining` (searches, or µUSD) among `tasks` as evenly as possible (earlier
    tasks first)."""
    share, extra = divmod(max(0, remaining), max(1, tasks))
    return [share + (1 if i < extra else 0) for i in range(tasks)]


@dataclass
class Grant:
    """What one search step may send, and what its searches came to.

    `take` bounds the step's sending as its searches start; `sent` and `lost` are read from
    its searches' stored answers, so a step that runs again after a stop counts the
    searches its earlier start sent, though it does not send them again."""

    granted: int
    share: int  # the research task's share of the searches
    counted_before: int  # the task's searches before this step
    cap: int  # the run's
    # Keys of the searches the step let go out, by this start and any earlier one in this
    # process (runtime/process.py); None: it ran before in another process, which may have
    # sent any of them, so it sends nothing new.
    went_out: set[str] | None = field(default_factory=set)
    taken: int = 0  # searches the step let go out, in this start and earlier ones
    sent: int = 0  # searches sent for this step, by this start or an earlier one
    lost: int = 0  # searches in flight at a stop: counted as sent, never answered
    cost: int = 0  # µUSD the searches this step started cost (Tavily's credits; llm/prices.py)

    def __post_init__(self) -> None:
        self.taken = len(self.went_out or ())
        self.earlier = None if self.went_out is None else frozenset(self.went_out)

    def may_have_gone(self, key: str) -> bool:
        """Whether a search with no saved answer may have been sent by an earlier start."""
        return self.earlier is None or key in self.earlier

    def take(self, key: str) -> bool:
        """Let the search `key` go out, noted before it is sent; False once the step's
        share is spent."""
        if self.taken >= self.granted or self.went_out is None:
            return False
        self.taken += 1
        self.went_out.add(key)
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
