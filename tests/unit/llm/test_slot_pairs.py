"""What one pair of calls says about a model server (llm/slot_pairs.py), at exact times."""

from __future__ import annotations

import pytest

from deep_research.llm.slot_pairs import Call, pair_vote, vote


@pytest.mark.parametrize(
    ("after", "said"),
    [(0.0, -2), (0.1, -2), (0.2, -1), (0.3, -1), (0.4, 0), (0.45, 1), (0.8, 1), (0.85, 2)],
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
    # A short-prompt call's pace would make a prompt-heavy call look queued.
    short_prompt = _alone(1.0, tokens=100, prompt=100)
    before = Call("a", 10.0, 12.0, role="researcher", tokens=100, prompt=100, alone=False)
    heavy = Call("b", 10.0, 13.0, role="researcher", tokens=100, prompt=5_000, alone=False)
    assert pair_vote(heavy, [short_prompt, before], before) == 0
    heavy_paced = _alone(2.0, tokens=100, prompt=5_000)  # its 2 s: half of it after `before`
    assert pair_vote(heavy, [short_prompt, heavy_paced, before], before) == 1
