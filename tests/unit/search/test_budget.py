"""search/budget.py (shares and the search step's grant) and the steps' hand-over."""

from __future__ import annotations

import pytest

from deep_research.runtime import process
from deep_research.search.budget import Grant, split


@pytest.mark.parametrize(("remaining", "tasks"), [(7, 3), (1, 4), (10, 1), (0, 3), (-5, 2)])
def test_shares_are_even_earlier_tasks_first_and_never_negative(remaining: int, tasks: int) -> None:
    shares = split(remaining, tasks)
    assert len(shares) == tasks and sum(shares) == max(0, remaining)
    assert shares == sorted(shares, reverse=True) and max(shares) - min(shares) <= 1
    assert min(shares) >= 0


@pytest.mark.parametrize("granted", [0, 1, 3])
def test_a_grant_lets_out_one_search_at_a_time(granted: int) -> None:
    grant = Grant(granted, share=5, counted_before=1, cap=8)
    assert grant.unused == granted
    taken = [grant.take(f"q{i}") for i in range(granted + 2)]
    assert taken == [True] * granted + [False, False]
    assert grant.taken == granted and grant.went_out == {f"q{i}" for i in range(granted)}


def test_a_step_started_again_sends_only_what_its_earlier_start_here_did_not() -> None:
    here = Grant(3, share=3, counted_before=0, cap=3, went_out={"sent before"})
    assert here.taken == 1, "what went out before counts against the share"
    assert here.may_have_gone("sent before") and not here.may_have_gone("never sent")
    assert here.take("never sent") and here.take("another") and not here.take("one more")
    elsewhere = Grant(3, share=3, counted_before=0, cap=3, went_out=None)
    assert elsewhere.may_have_gone("anything") and not elsewhere.take("anything")


def test_a_grant_counts_answers_sent_and_lost_never_more_than_granted() -> None:
    grant = Grant(3, share=5, counted_before=0, cap=8)
    grant.answered(True)
    grant.answered(False)  # shared with a sibling or cached: free
    assert grant.used == 1 and grant.unused == 2
    grant.lose()
    assert grant.used == 2 and grant.lost == 1
    grant.lose()
    grant.lose()
    assert grant.used == 3 and grant.unused == 0, "a lost search never counts past the grant"


def test_hand_over_lets_a_step_start_fresh_once_and_only_on_its_token() -> None:
    scope = ("thread", "call")
    process.hand_over(scope, "m1")
    assert not process.take_over(scope, "m2"), "another token: a re-run"
    process.hand_over(scope, "m1")
    assert process.take_over(scope, "m1")
    assert not process.take_over(scope, "m1"), "a second start is a re-run after a stop"
    assert not process.take_over(("thread", "other"), "m1")
