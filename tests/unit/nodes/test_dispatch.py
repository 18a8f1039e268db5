"""What plan an orchestrator reply holds for review, called directly."""

from __future__ import annotations

from deep_research.nodes import churn
from deep_research.nodes.dispatch import plan_of
from tests.unit.nodes.test_plan_review import call, reply, state, todos


def test_the_plan_is_the_research_topics_when_the_reply_researches() -> None:
    paused = reply(
        call("write_todos", "t", todos=todos("ignored")),
        call("research", "r", topic="Heat pump costs"),
    )
    plan = plan_of(state(paused), paused)
    assert plan == [{"content": "Heat pump costs", "status": "pending"}]


def test_else_the_last_valid_todo_call_that_was_not_refused() -> None:
    paused = reply(
        call("write_todos", "a", todos=todos("first")),
        call("write_todos", "b", todos=todos("second")),
        call("write_todos", "c", todos="not a list"),
        call("write_todos", "d", todos=todos("refused")),
    )
    guard = {**churn.fresh(), "refused": {"d": "locked"}}
    assert [t["content"] for t in plan_of(state(paused, churn=guard), paused)] == ["second"]


def test_a_reply_with_no_plan_has_an_empty_one() -> None:
    paused = reply(call("write_todos", "a", todos="bad"), call("unknown", "b"))
    assert plan_of(state(paused), paused) == []


def test_an_item_written_twice_is_shown_once() -> None:
    researching = reply(
        call("research", "r1", topic="Heat pump costs"),
        call("research", "r2", topic="heat pump  COSTS"),
    )
    assert [t["content"] for t in plan_of(state(researching), researching)] == ["Heat pump costs"]
    planning = reply(call("write_todos", "t", todos=todos("Noise", "Grants", " noise")))
    assert [t["content"] for t in plan_of(state(planning), planning)] == ["Noise", "Grants"]
