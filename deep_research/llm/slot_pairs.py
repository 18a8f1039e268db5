"""What a pair of calls says about a model server: did the one still going queue behind the
one that finished (one request at a time), or was it answered alongside (many)?

`llm/slots.py` keeps the running count of these votes for each server and decides from it;
this module only reads one pair. A call that was in flight while another finished, and then
still took about its own full time (its tokens at the pace of calls of its shape that ran
alone), was queued behind it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# A pair of calls says something only when the one that went on was in flight for at least
# this share of its expected time while the other ran.
INFORMATIVE = 0.8
# After the other finished, a queued call takes about its whole expected time, a call served
# alongside about nothing of it: at or over ONE_SLOT it queued, at or under MANY it did not.
ONE_SLOT = 0.45
MANY = 0.3
# Each pair votes: +2 at or over SURE, +1 at or over ONE_SLOT, -1 at or under MANY, -2 at
# or under CLEAR; the gate decides on a lead of LEAD (one slot above, many below). So a
# clear first pair decides alone, two likely ones together, and pairs that disagree wait
# for more (for good, if they keep disagreeing): a busy machine slows some calls (a slowed
# call that ran alone makes a queued one look quick; a stalled one looks queued), and one
# such pair must not settle it either way. A server that answers faster than SHORTEST (a
# test's scripted one) is never judged: the loop's own jitter would be most of what is
# measured.
SURE = 0.85
CLEAR = 0.1
LEAD = 2
SHORTEST = 0.1  # seconds a call is expected to take, at least, for its pair to count
# The pace of the calls that ran alone measures a call of their shape only: a call is judged
# by the pace of those whose prompt per reply token is within this factor of its own (more
# prompt reading than that pace foresees would read as queueing on a parallel server).
SHAPE = 3.0


@dataclass
class Call:
    """One model call through a gate: when it went out and came back, and its size."""

    lane: str
    sent: float
    done: float = 0.0
    role: str = ""
    tokens: int = 0  # completion tokens (0: unknown, or not one answer's: a retried call)
    prompt: int = 0  # prompt tokens (0: unknown)
    alone: bool = True  # no other call was in flight at any time during it
    first: bool = False  # its lane's first, made before the server was found out
    ended: bool = False

    def shape(self) -> float:
        """Prompt tokens per reply token (0: unknown)."""
        return self.prompt / self.tokens if self.prompt and self.tokens else 0.0


def pair_vote(call: Call, done: Iterable[Call], before: Call | None) -> int:
    """The vote of `call` (just ended) against `before`, the call that finished before it:
    judged on a call of the same role only, at the pace of the calls in `done` that ran
    alone with about its shape (a prompt-heavy call measured by a short-prompt call's pace
    would read as queueing). 0 when the pair says nothing."""
    if before is None or call.sent >= before.done or before.role != call.role:
        return 0
    alone = [c for c in done if c.alone and c.done > c.sent and alike(c, call)]
    fastest = max(alone, key=lambda c: c.tokens / (c.done - c.sent), default=None)
    if fastest is None:
        return 0
    expected = call.tokens * (fastest.done - fastest.sent) / fastest.tokens
    together = before.done - max(before.sent, call.sent)
    if expected < SHORTEST or together < INFORMATIVE * expected:
        return 0
    return vote((call.done - before.done) / expected)


def vote(after: float) -> int:
    """What one pair says (see `SURE`): for one slot above 0, for many below, else 0."""
    if after >= ONE_SLOT:
        return 2 if after >= SURE else 1
    if after <= MANY:
        return -2 if after <= CLEAR else -1
    return 0


def alike(a: Call, b: Call) -> bool:
    """Whether two calls' prompts per reply token are within `SHAPE` of each other (an
    unknown one is taken as alike)."""
    low, high = sorted((a.shape(), b.shape()))
    return not low or high <= SHAPE * low
