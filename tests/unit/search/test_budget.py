"""search/budget.py: quotas, reservations and the search step's grant, called directly."""

from __future__ import annotations

import pytest

from deep_research.runtime import process
from deep_research.search.budget import Grant, may_send, quotas, reserve


@pytest.mark.parametrize(("remaining", "tasks"), [(7, 3), (1, 4), (10, 1), (0, 3), (-5, 2)])
def test_quotas_are_even_earlier_tasks_first_and_never_negative(remaining: int, tasks: int) -> None:
    shares = quotas(remaining, tasks)
    assert len(shares) == tasks and sum(shares) == max(0, remaining)
    assert shares == sorted(shares, reverse=True) and max(shares) - min(shares) <= 1
    assert min(shares) >= 0


def test_a_reservation_grants_at_most_what_the_quota_leaves() -> None:
    assert reserve(wanted=3, quota=10, counted=2)["granted"] == 3
    assert reserve(wanted=5, quota=4, counted=2)["granted"] == 2
    assert reserve(wanted=5, quota=4, counted=9)["granted"] == 0, "over-counted: none, not <0"
    assert reserve(wanted=-1, quota=4, counted=0)["granted"] == 0
    one, two = reserve(1, 1, 0), reserve(1, 1, 0)
    assert one["id"] != two["id"], "each reservation is its own"
    assert one["process"] == process.PROCESS_ID


def test_a_reservation_lets_its_step_send_once_and_only_in_its_process() -> None:
    reservation = reserve(2, 2, 0)
    assert may_send(reservation)
    assert not may_send(reservation), "a step that started before may have sent already"
    assert not may_send(None)
    foreign = reserve(2, 2, 0)
    foreign["process"] = "another-process"
    assert not may_send(foreign)
    foreign["process"] = process.PROCESS_ID
    assert may_send(foreign), "refusing the foreign one did not mark it started"


@pytest.mark.parametrize("granted", [0, 1, 3])
def test_a_grant_is_spent_one_search_at_a_time(granted: int) -> None:
    grant = Grant(granted, quota=5, counted_before=1, cap=8)
    assert grant.unused == granted
    taken = [grant.take() for _ in range(granted + 2)]
    assert taken == [True] * granted + [False, False]
    assert grant.sent == granted and grant.unused == 0
