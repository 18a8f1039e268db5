"""What one pair of calls says about a model server (llm/slot_pairs.py), at exact times."""

from __future__ import annotations

import pytest

from deep_research.llm.slot_pairs import Call, pair_vote, vote


@pytest.mark.parametrize(
    ("after", "said"),
    [
        (0.0, -2),
        (0.1, -2),
        (0.12, -1),
        (0.2, -1),
        (0.3, -1),
        (0.4, 0),
        (0.45, 1),
        (0.8, 1),
        (0.85, 2),
    ],
)
def test_a_pair_votes_by_how_much_of_its_time_the_later_call_took_after(
    after: float, said: int
) -> None:
    assert vote(after) == said


def _alone(seconds: float, tokens: int = 100, prompt: int = 0) -> Call:
    """A call that ran alone: its pace is `tokens` in `seconds`."""
    return Call("a", 0.0, seconds, role="researcher", tokens=tokens, prompt=prompt)


def test_a_call_that_took_its_whole_time_after_the_other_queued_behind_it() -> None:
    paced = _alone(1.0)
    before = Call("a", 10.0, 11.0, role="researcher", tokens=100, alone=False)
    queued = Call("b", 10.0, 12.0, role="researcher", tokens=100, alone=False)
    served = Call("b", 10.0, 11.05, role="researcher", tokens=100, alone=False)
    assert pair_vote(queued, [paced, before], before) == 2
    assert pair_vote(served, [paced, before], before) == -2


def test_a_pair_says_nothing_across_roles_too_briefly_or_without_a_pace() -> None:
    paced = _alone(1.0)
    before = Call("a", 10.0, 11.0, role="orchestrator", tokens=100, alone=False)
    other_role = Call("b", 10.0, 12.0, role="researcher", tokens=100, alone=False)
    assert pair_vote(other_role, [paced, before], before) == 0
    before = Call("a", 10.0, 11.0, role="researcher", tokens=100, alone=False)
    late = Call("b", 10.9, 12.0, role="researcher", tokens=100, alone=False)  # 0.1 s together
    assert pair_vote(late, [paced, before], before) == 0
    assert pair_vote(Call("b", 10.0, 12.0, role="researcher", tokens=100), [before], before) == 0
    quick = Call("b", 10.0, 10.1, role="researcher", tokens=5, alone=False)  # under SHORTEST
    assert pair_vote(quick, [paced, before], before) == 0
    assert pair_vote(other_role, [paced], None) == 0


def test_a_call_is_paced_by_calls_of_its_shape_only() -> None:
    # A shorter-prompt call's pace (5 times less prompt a reply token) would make a
    # prompt-heavy call look queued.
    short_prompt = _alone(1.0, tokens=100, prompt=1_000)
    before = Call("a", 10.0, 12.0, role="researcher", tokens=100, prompt=100, alone=False)
    heavy = Call("b", 10.0, 13.0, role="researcher", tokens=100, prompt=5_000, alone=False)
    assert pair_vote(heavy, [short_prompt, before], before) == 0
    heavy_paced = _alone(2.0, tokens=100, prompt=5_000)  # its 2 s: half of it after `before`
    assert pair_vote(heavy, [short_prompt, heavy_paced, before], before) == 1


def test_the_pace_is_the_fastest_lone_call_s_and_a_call_of_no_time_is_none() -> None:
    fast, slow, instant = _alone(1.0), _alone(2.0), Call("a", 5.0, 5.0, role="researcher")
    instant.tokens = 100
    before = Call("a", 10.0, 11.0, role="researcher", tokens=100, alone=False)
    call = Call("b", 10.0, 12.0, role="researcher", tokens=100, alone=False)
    # Paced by the 1 s call: it took its whole time after `before` (the 2 s one: half).
    assert pair_vote(call, [slow, fast, instant, before], before) == 2


def test_a_pair_counts_only_when_the_calls_ran_together_long_enough() -> None:
    paced = _alone(1.0)
    before = Call("a", 10.0, 11.0, role="researcher", tokens=100, alone=False)
    # Together for 0.7 of the call's expected second: too little (INFORMATIVE is 0.8).
    short = Call("b", 10.3, 12.0, role="researcher", tokens=100, alone=False)
    assert pair_vote(short, [paced, before], before) == 0
    long = Call("b", 10.1, 12.0, role="researcher", tokens=100, alone=False)
    assert pair_vote(long, [paced, before], before) == 2
    # Sent before `before` was: together only from `before`'s start (0.5 s).
    earlier = Call("b", 9.0, 11.6, role="researcher", tokens=100, alone=False)
    later_before = Call("a", 10.5, 11.0, role="researcher", tokens=100, alone=False)
    assert pair_vote(earlier, [paced, later_before], later_before) == 0
